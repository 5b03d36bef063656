#!/usr/bin/env bash
# Training throughput: `engine train` against KataGo's python/train.py, same
# model config, batch size and data, one after the other on this machine.
#
#   scripts/train_throughput.sh KATAGO_PYTHON_DIR PYTHON SHUFFLED_DIR [KIND] [BATCH] [SAMPLES]
#
# SHUFFLED_DIR is one shuffled data dir (train.json, train/*.npz, val/*.npz);
# its parent is given to `engine train -latestdatadir`. PYTHON must have
# torch and numpy. Prints each side's steady-state samples/s: engine's mean of
# its per-20-batch figures after the first interval, KataGo's from its
# per-100-batch `time_since_last_print` after the first print.
set -euo pipefail
kg="${1:-${KATAGO_PYTHON:?give the python/ folder of a KataGo 1.17.2 source tree as the first argument or in KATAGO_PYTHON}}"
py="${2:?give a python with torch and numpy as the second argument}"; data="${3:?give a shuffled data dir (train.json, train/, val/) as the third argument}"; kind="${4:-b2c16}"; batch="${5:-64}"; samples="${6:-19200}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'cp "$work/katago.log" /tmp/train_throughput_katago.log 2>/dev/null; rm -rf "$work"' EXIT
export OMP_WAIT_POLICY=PASSIVE

echo "engine train: $kind batch $batch, $samples samples"
"$here/target/release/engine" train -traindir "$work/engine" -latestdatadir "$(dirname "$data")" \
  -model-kind "$kind" -batch-size "$batch" -samples-per-epoch "$samples" \
  -max-epochs-this-instance 1 -no-lr-warmup 2>/dev/null
python3 - "$work/engine/metrics.jsonl" <<'EOF'
import json, sys
v = [json.loads(l) for l in open(sys.argv[1])]
sps = [x["samples_per_sec"] for x in v if "samples_per_sec" in x][1:]
print(f"engine train: {sum(sps)/len(sps):.1f} samples/s (mean of {len(sps)} intervals)")
EOF

echo "KataGo train.py: $kind batch $batch, $samples samples"
(cd "$kg" && "$py" train.py -traindir "$work/katago" -datadir "$data" -pos-len 19 \
  -batch-size "$batch" -model-kind "$kind" -samples-per-epoch "$samples" \
  -max-epochs-this-instance 1 -no-export -no-compile -quit-if-no-data -no-lr-warmup \
  > "$work/katago.log" 2>&1) || { tail -20 "$work/katago.log"; exit 1; }
python3 - "$work/katago" "$batch" <<'EOF'
import json, os, sys
d, batch = sys.argv[1], int(sys.argv[2])
times = []
for root, _, files in os.walk(d):
    for f in files:
        if f.startswith("metrics_train") and f.endswith(".json"):
            for line in open(os.path.join(root, f)):
                m = json.loads(line)
                if "time_since_last_print" in m:
                    times.append(m["time_since_last_print"])
times = times[1:]
print(f"KataGo train.py: {100*batch*len(times)/sum(times):.1f} samples/s (mean over {len(times)} x 100 batches)")
EOF
