#!/usr/bin/env bash
# Self-play throughput writing to S3 (a local SeaweedFS server) against a
# local folder, same config, alternated in one run.
#
#   scripts/store_selfplay_bench.sh [ROUNDS] [GAMES] [MAX_ROWS_PER_FILE]
#
# Each round plays GAMES games (default 100) of 9x9 with the project's own
# net at the learning loop's settings (configs/learn.toml: 64 visits, 64
# game threads), once into a folder and once into s3://, in alternating
# order, and takes rows/hour from self-play's own summary (rows written).
# MAX_ROWS_PER_FILE (default 1000) makes the writer hand a file to the store
# every few dozen games. Prints one line per run and the median ratio.
# Needs ./setup.sh to have run (weed in .venv) and a release build.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${1:-5}"
games="${2:-100}"
max_rows="${3:-1000}"
engine="$root/target/release/engine"
net="$(ls "$root"/models/*.bin.gz | head -n 1)"
work="$(mktemp -d /tmp/store-selfplay-bench.XXXXXX)"
trap '"$root/scripts/s3_server.sh" stop "$work/s3" >/dev/null 2>&1 || true' EXIT
"$root/scripts/s3_server.sh" start "$work/s3" >/dev/null
# shellcheck disable=SC1091
source "$work/s3/env"
export OMP_WAIT_POLICY=PASSIVE

overrides="bSizes=9,bSizeRelProbs=1,dataBoardLen=9,maxVisits=64,cheapSearchVisits=16,reducedVisitsMin=16,numGameThreads=64,nnMaxBatchSize=64,maxRowsPerTrainFile=$max_rows,logGamesEvery=1000000"

run() { # out-dir -> rows/hour
  "$engine" selfplay -config "$root/configs/selfplay.toml" -override-config "$overrides" \
    -model "$net" -output-dir "$1" -max-games-total "$games" 2>&1 >/dev/null \
    | sed -n 's/^engine selfplay: [0-9]* games, .* (\([0-9.]*\) games\/h, \([0-9]*\) rows\/h).*/\2/p'
}

echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $games games per run, files of $max_rows rows"
ratios=()
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then order="local s3"; else order="s3 local"; fi
  for where in $order; do
    if [ "$where" = local ]; then
      rate=$(run "$work/local-$r")
      local_rate=$rate
    else
      rate=$(run "s3://$ENGINE_TEST_S3_BUCKET/bench-$r")
      s3_rate=$rate
    fi
    echo "round $r $where: $rate rows/hour"
  done
  ratio=$(python3 -c "print(f'{$s3_rate / $local_rate:.3f}')")
  ratios+=("$ratio")
  echo "round $r s3/local: $ratio"
done
python3 - "${ratios[@]}" <<'PY'
import statistics, sys
r = sorted(float(x) for x in sys.argv[1:])
print(f"median s3/local rows/hour: {statistics.median(r):.3f} (rounds: {', '.join(f'{x:.3f}' for x in r)})")
PY
rm -rf "$work/local-"*
