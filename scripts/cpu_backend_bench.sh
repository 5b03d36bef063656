#!/usr/bin/env bash
# `engine benchmark` with the libtorch and the pure-Rust CPU backends,
# alternated ROUNDS times in one run (so that a shared machine's load hits
# both alike), printing each run's visits/s lines.
#
#   scripts/cpu_backend_bench.sh [ROUNDS] -- BENCHMARK ARGS...
#   scripts/cpu_backend_bench.sh 2 -- -model ../shared/models/g170-b6c96-s175395328-d26788732.bin.gz \
#       -config configs/gtp.toml -v 400 -t 1,2 --boardsize 19
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
engine="${ENGINE:-$here/target/release/engine}"
rounds="${1:-1}"
shift || true
[ "${1:-}" = "--" ] && shift
lscpu | grep -E "Model name|^CPU\(s\)|Flags" | sed 's/^Flags:.*\(avx512f\).*/ISA: AVX-512/; s/^Flags:.*avx2.*/ISA: AVX2/'
for round in $(seq "$rounds"); do
  for backend in libtorch rust; do
    echo "== round $round, nnCpuBackend=$backend"
    "$engine" benchmark "$@" -override-config "nnCpuBackend=$backend" 2>/dev/null |
      grep -E "^Network:|numSearchThreads = *[0-9]+:"
  done
done
