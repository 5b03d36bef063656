#!/usr/bin/env bash
# Two engine binaries side by side on this machine, alternating, for a
# before/after figure of a change (VMs are noisy: rounds alternate the two
# binaries and the medians are printed).
#
#   scripts/ab_bench.sh OLD_ENGINE NEW_ENGINE SHUFFLED_DATA_PARENT [ROUNDS]
#
# Search: `engine benchmark` with the g170 b6c96 net (../shared/models),
# configs/gtp.toml, 400 visits, 8 positions, 1 and 2 threads, on 9x9 and
# 19x19: visits/s. Training: `engine train` of a b2c16 net on 9x9 rows,
# batch 64, 6,400 samples from the newest window under
# SHUFFLED_DATA_PARENT (e.g. a learn run's `shuffleddata`): the mean of its
# per-interval samples/s after the first.
set -euo pipefail
old="$1"; new="$2"; data="$3"; rounds="${4:-3}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${ENGINE_SHARED_DIR:-$here/../shared}"
net="$shared/models/g170-b6c96-s175395328-d26788732.bin.gz"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMP_WAIT_POLICY=PASSIVE

search() { # BIN SIZE -> "t1 t2" visits/s
  "$1" benchmark -model "$net" -config "$here/configs/gtp.toml" -v 400 -t 1,2 \
    -boardsize "$2" -n 8 2>&1 | awk -F'visits/s = ' '/^numSearchThreads = +[12]: .*visits\/s/ {split($2, a, " "); printf "%s ", a[1]}'
}
train() { # BIN -> samples/s
  rm -rf "$work/t"
  "$1" train -traindir "$work/t" -latestdatadir "$data" -model-kind b2c16 -pos-len 9 \
    -batch-size 64 -samples-per-epoch 6400 -max-epochs-this-instance 1 -no-lr-warmup \
    >/dev/null 2>&1
  python3 - "$work/t/metrics.jsonl" <<'EOF'
import json, sys
v = [json.loads(l) for l in open(sys.argv[1])]
s = [x["samples_per_sec"] for x in v if "samples_per_sec" in x][1:]
print(f"{sum(s)/len(s):.1f}")
EOF
}

lscpu | grep -E "Model name" || true
lscpu | grep -o -E "avx512f|avx2" | sort -u | tr '\n' ' '; echo
: > "$work/rows"
for r in $(seq "$rounds"); do
  for side in old new; do
    bin="${!side}"
    s9=$(search "$bin" 9); s19=$(search "$bin" 19); tr=$(train "$bin")
    echo "round $r $side: 9x9 t1 t2: $s9| 19x19 t1 t2: $s19| train: $tr" | tee -a "$work/rows"
  done
done
python3 - "$work/rows" <<'EOF'
import re, statistics, sys
rows = {"old": [], "new": []}
for line in open(sys.argv[1]):
    side = line.split()[2].rstrip(":")
    m = re.search(r"9x9 t1 t2: (\S+) (\S+) \| 19x19 t1 t2: (\S+) (\S+) \| train: (\S+)", line)
    rows[side].append([float(x) for x in m.groups()])
names = ["9x9 1 thread", "9x9 2 threads", "19x19 1 thread", "19x19 2 threads", "train samples/s"]
print(f"{'median':<18}{'old':>10}{'new':>10}{'new/old':>9}")
for i, name in enumerate(names):
    o = statistics.median(r[i] for r in rows["old"])
    n = statistics.median(r[i] for r in rows["new"])
    print(f"{name:<18}{o:>10.1f}{n:>10.1f}{n / o:>9.3f}")
EOF
