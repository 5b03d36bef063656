#!/usr/bin/env bash
# kill -9 test for `engine selfplay`: starts self-play again and again into
# one output folder and kills it with SIGKILL at a random moment each time;
# afterwards every tdata/*.npz must pass npz_check.py and every sgfs/*.sgfs
# line must be one whole game. Temporary files of the run store (NAME#N)
# may remain: they are never named *.npz / *.sgfs, so readers skip them,
# and a later run removes those older than an hour from the folders it
# writes into.
#
#   scripts/selfplay_kill_test.sh [ROUNDS] [PYTHON_WITH_NUMPY]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${1:-8}"
py="${2:-python3}"
shared="${ENGINE_SHARED_DIR:-$here/../shared}"
[ -d "$shared" ] || { echo "selfplay_kill_test.sh: the reference data (KataGo's nets, vectors, tools) is not at $shared: put shared/ beside the checkout or set ENGINE_SHARED_DIR" >&2; exit 2; }
out="$(mktemp -d /tmp/selfplay-kill.XXXXXX)"
engine="$here/target/release/engine"
cfg="$here/configs/selfplay.toml"
over="numGameThreads=2,maxVisits=16,cheapSearchVisits=8,reducedVisitsMin=8,bSizes=7,bSizeRelProbs=1,maxRowsPerTrainFile=5,nnMaxBatchSize=8,maxMovesPerGame=120"
for i in $(seq 1 "$rounds"); do
  "$engine" selfplay -config "$cfg" -model "$shared/models/g170-b6c96-s175395328-d26788732.bin.gz" \
    -output-dir "$out" -override-config "$over" 2>/dev/null &
  pid=$!
  sleep "$(( (RANDOM % 15) + 5 ))"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  echo "round $i: $(ls "$out"/*/tdata/*.npz 2>/dev/null | wc -l) npz, $(cat "$out"/*/sgfs/*.sgfs 2>/dev/null | wc -l) games"
done
"$py" "$shared/tools/npz_check.py" "$out"/*/tdata
bad=0
for f in "$out"/*/sgfs/*.sgfs; do
  [ -e "$f" ] || continue
  while IFS= read -r line; do
    case "$line" in
      "(;FF[4]"*")") ;;
      *) echo "half-written SGF line in $f"; bad=1 ;;
    esac
  done < "$f"
done
echo "sgfs check: $([ $bad = 0 ] && echo PASS || echo FAIL)"
echo "output: $out"
exit $bad
