#!/usr/bin/env bash
# Two ways of running the network side by side on this machine, alternated,
# for a before/after figure of evaluations/s (VMs are noisy: each pair runs
# A then B, and the median of the pairs' ratios B/A is printed).
#
#   scripts/nn_ab.sh A B [SIZE] [BATCH] [PAIRS] [SECONDS]
#
# A and B: an engine binary, after any VAR=VALUE settings, e.g. the
# Winograd tiling the rule picks against F(5x5) forced, on one binary:
#
#   scripts/nn_ab.sh target/release/engine \
#     'ENGINE_WINOGRAD=f5 target/release/engine' 19 1 8
#
# Each run is `engine benchmark -nn` with the g170 b6c96 net
# (../shared/models, or ENGINE_SHARED_DIR), one NN server thread, on a
# SIZE x SIZE board (19) at batch BATCH (1) for SECONDS (3); PAIRS (6).
set -euo pipefail
a="$1"; b="$2"; size="${3:-19}"; batch="${4:-1}"; pairs="${5:-6}"; seconds="${6:-3}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${ENGINE_SHARED_DIR:-$here/../shared}"
net="$shared/models/g170-b6c96-s175395328-d26788732.bin.gz"
[ -f "$net" ] || { echo "nn_ab.sh: no net at $net (set ENGINE_SHARED_DIR)" >&2; exit 2; }

evals() { # ARM -> evaluations/s
  local arm
  read -r -a arm <<<"$1"
  env "${arm[@]}" benchmark -nn -batch "$batch" -seconds "$seconds" -boardsize "$size" \
    -model "$net" -override-config numNNServerThreadsPerModel=1 2>/dev/null |
    python3 -c 'import json,sys; line=[l for l in sys.stdin if l.startswith("{")][-1]; print(json.loads(line)["nn_benchmark"]["results"][0]["evals_per_second"])'
}

lscpu | grep -E "Model name" || true
echo "A: $a"
echo "B: $b"
ratios=()
for i in $(seq "$pairs"); do
  ea=$(evals "$a"); eb=$(evals "$b")
  r=$(python3 -c "print(f'{$eb / $ea:.4f}')")
  ratios+=("$r")
  printf 'pair %d: A %.1f  B %.1f evaluations/s  B/A %s\n' "$i" "$ea" "$eb" "$r"
done
python3 - "$size" "$batch" "${ratios[@]}" <<'PY'
import statistics, sys
size, batch, r = sys.argv[1], sys.argv[2], [float(x) for x in sys.argv[3:]]
print(f"{size}x{size} batch {batch}: median B/A {statistics.median(r):.3f} "
      f"({len(r)} pairs, {min(r):.3f}-{max(r):.3f})")
PY
