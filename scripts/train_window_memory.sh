#!/usr/bin/env bash
# Peak memory and speed of `engine train` on a small and a 10x larger
# shuffled window: the trainer streams the window from the store a few
# files at a time, so its peak RSS should not grow with the window.
#
#   scripts/train_window_memory.sh [ROUNDS] [SAMPLES] [OLD_ENGINE]
#
# Builds a pool of 19x19 rows from ../shared/vectors/npz-more (its 3 files
# of 1,000 rows, copied under new names up to 200,000 rows), shuffles it
# into a 20,000-row window and a 200,000-row window (files of 20,000 rows:
# 1 and 10 files), then trains b2c16 for SAMPLES samples (default 12,800,
# batch 64) from a fresh start on each, alternated, ROUNDS times (default
# 3), under /usr/bin/time -v. Prints peak RSS and samples/s per run and the
# medians. With OLD_ENGINE (a binary built from an earlier commit, which
# loaded the whole window into memory), the same runs with it too.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${1:-3}"
samples="${2:-12800}"
old="${3:-}"
engine="$root/target/release/engine"
shared="${ENGINE_SHARED_DIR:-$root/../shared}"
work="$(mktemp -d /tmp/train-window-memory.XXXXXX)"
export OMP_WAIT_POLICY=PASSIVE

mkdir -p "$work/pool"
i=0
while [ "$i" -lt 200 ]; do
  for f in "$shared"/vectors/npz-more/*.npz; do
    [ "$i" -lt 200 ] || break
    cp "$f" "$work/pool/$(printf 'P%015X' "$i").npz"
    i=$((i + 1))
  done
done
for rows in 20000 200000; do
  "$engine" shuffle "$work/pool" -out-dir "$work/w$rows/s/train" -min-rows 1000 \
    -keep-target-rows "$rows" -expand-window-per-row 1 -taper-window-exponent 1 \
    -approx-rows-per-out-file 20000 -num-processes 2 -seed 1 >/dev/null
done

run() { # binary window -> "rss_kb samples_per_s"
  local t="$work/train-$RANDOM"
  /usr/bin/time -v "$1" train -traindir "$t" -latestdatadir "$2" -model-kind b2c16 -pos-len 19 \
    -batch-size 64 -samples-per-epoch "$samples" -max-epochs-this-instance 1 -no-lr-warmup \
    2>"$t.log" >/dev/null
  local rss sps
  rss=$(sed -n 's/^\s*Maximum resident set size (kbytes): //p' "$t.log")
  sps=$(python3 -c "import json,sys; print(round([json.loads(l) for l in open(sys.argv[1]) if 'epoch_samples_per_sec' in l][-1]['epoch_samples_per_sec']))" "$t/metrics.jsonl")
  rm -rf "$t" "$t.log"
  echo "$rss $sps"
}

echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; b2c16, batch 64, $samples samples per run"
binaries=("new:$engine")
[ -n "$old" ] && binaries+=("old:$old")
results="$work/results.txt"
for r in $(seq 1 "$rounds"); do
  for b in "${binaries[@]}"; do
    for rows in 20000 200000; do
      read -r rss sps < <(run "${b#*:}" "$work/w$rows")
      echo "round $r ${b%%:*} window $rows rows: peak RSS $((rss / 1024)) MiB, $sps samples/s"
      echo "${b%%:*} $rows $rss $sps" >>"$results"
    done
  done
done
python3 - "$results" <<'PY'
import statistics, sys
runs = [l.split() for l in open(sys.argv[1])]
for name in sorted({r[0] for r in runs}):
    for rows in ("20000", "200000"):
        sel = [r for r in runs if r[0] == name and r[1] == rows]
        rss = statistics.median(int(r[2]) for r in sel) / 1024
        sps = statistics.median(int(r[3]) for r in sel)
        print(f"median {name} window {rows}: peak RSS {rss:.0f} MiB, {sps:.0f} samples/s")
PY
rm -rf "$work"
