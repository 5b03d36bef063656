#!/usr/bin/env bash
# `engine benchmark` against `katago benchmark` (KataGo 1.17.2, e.g. its
# Eigen backend built from source with -DUSE_BACKEND=EIGEN -DUSE_AVX2=1),
# alternated ROUNDS times in one run so that a shared machine's noise hits
# both alike; prints every run's visits/s per thread count, then per thread
# count the medians and engine / KataGo.
#
#   scripts/benchmark_vs_katago.sh KATAGO KATAGO_GTP_CFG [ROUNDS] [VISITS] [THREADS] [BOARDSIZE]
#   scripts/benchmark_vs_katago.sh "$KATAGO" "$KATAGO_SRC/cpp/configs/gtp_example.cfg" 3 400 1,2 19
#
# KATAGO (or the first argument) is the KataGo binary; KATAGO_SRC a KataGo
# source tree (for its gtp_example.cfg).
#
# Both use the g170 b6c96 net (ENGINE_SHARED_DIR or ../shared), or MODEL; ours runs
# with configs/gtp.toml (the Rust CPU backend, one server per core).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
katago="${1:-${KATAGO:-}}"
kcfg="${2:-${KATAGO_SRC:+$KATAGO_SRC/cpp/configs/gtp_example.cfg}}"
[ -n "$katago" ] || { echo "benchmark_vs_katago.sh: give the KataGo binary as the first argument or in KATAGO" >&2; exit 2; }
[ -n "$kcfg" ] || { echo "benchmark_vs_katago.sh: give KataGo's gtp config as the second argument, or set KATAGO_SRC to its source tree" >&2; exit 2; }
rounds="${3:-3}"
visits="${4:-400}"
threads="${5:-1,2}"
size="${6:-19}"
engine="${ENGINE:-$here/target/release/engine}"
model="${MODEL:-${ENGINE_SHARED_DIR:-$here/../shared}/models/g170-b6c96-s175395328-d26788732.bin.gz}"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(grep -o -w -E 'avx512f|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')$(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "${size}x${size}, $visits visits, threads $threads, $rounds rounds"
# Each run's final result line per thread count, as "WHO THREADS VISITS/S"
# (KataGo redraws its progress line with carriage returns).
results() { # who
  tr '\r' '\n' | sed -n "/nnEvals/s/^numSearchThreads = *\([0-9]*\):.*visits\/s = \([0-9.]*\).*/$1 \1 \2/p" | tee -a "$out"
}
for round in $(seq "$rounds"); do
  "$engine" benchmark -model "$model" -config "$here/configs/gtp.toml" -v "$visits" -t "$threads" \
    -boardsize "$size" 2>/dev/null | results engine
  "$katago" benchmark -model "$model" -config "$kcfg" -v "$visits" -t "$threads" \
    -boardsize "$size" 2>/dev/null | results katago
done
python3 - "$out" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    who, t, v = line.split()
    runs[who, int(t)].append(float(v))
for t in sorted({t for _, t in runs}):
    e, k = statistics.median(runs["engine", t]), statistics.median(runs["katago", t])
    print(f"threads {t}: engine median {e:.1f} visits/s, KataGo median {k:.1f}, engine / KataGo {e / k:.2f}")
PY
