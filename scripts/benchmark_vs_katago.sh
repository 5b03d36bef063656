#!/usr/bin/env bash
# The engine against KataGo 1.17.2 (e.g. its Eigen backend built from
# source with -DUSE_BACKEND=EIGEN -DUSE_AVX2=1) on the same CPU, in one run
# and one table:
#
# - search: `engine benchmark` against `katago benchmark`, visits/s, for
#   each board size and search thread count, alternated ROUNDS times (each
#   round: every size, engine then KataGo) so that a shared machine's
#   noise hits both alike;
# - analysis (unless ANALYSIS=0): benches/analysis_throughput.sh, every
#   turn of a 200-move 19x19 game at 100 visits, positions/s, for each
#   thread count as analysis threads of one search thread each, engine
#   and KataGo alternated ROUNDS times.
#
# Prints every run, then one table of medians: engine, KataGo, engine /
# KataGo per row and thread count.
#
#   scripts/benchmark_vs_katago.sh KATAGO KATAGO_GTP_CFG [ROUNDS] [VISITS] [THREADS] [BOARDSIZES]
#   scripts/benchmark_vs_katago.sh "$KATAGO" "$KATAGO_SRC/cpp/configs/gtp_example.cfg" 3 400 1,2 9,13,19
#
# KATAGO (or the first argument) is the KataGo binary; KATAGO_SRC a KataGo
# source tree (for its gtp_example.cfg). The analysis part uses
# analysis_example.cfg beside the GTP config, or KATAGO_ANALYSIS_CFG.
#
# Both use the g170 b6c96 net (ENGINE_SHARED_DIR or ../shared), or MODEL; ours runs
# with configs/gtp.toml and configs/analysis.toml (the Rust CPU backend, one
# server per core), plus ENGINE_OVERRIDE (config overrides for both parts,
# e.g. ENGINE_OVERRIDE=nnPrecision=bf16).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
katago="${1:-${KATAGO:-}}"
kcfg="${2:-${KATAGO_SRC:+$KATAGO_SRC/cpp/configs/gtp_example.cfg}}"
[ -n "$katago" ] || { echo "benchmark_vs_katago.sh: give the KataGo binary as the first argument or in KATAGO" >&2; exit 2; }
[ -n "$kcfg" ] || { echo "benchmark_vs_katago.sh: give KataGo's gtp config as the second argument, or set KATAGO_SRC to its source tree" >&2; exit 2; }
rounds="${3:-3}"
visits="${4:-400}"
threads="${5:-1,2}"
sizes="${6:-9,13,19}"
kacfg="${KATAGO_ANALYSIS_CFG:-$(dirname "$kcfg")/analysis_example.cfg}"
engine="${ENGINE:-$here/target/release/engine}"
model="${MODEL:-${ENGINE_SHARED_DIR:-$here/../shared}/models/g170-b6c96-s175395328-d26788732.bin.gz}"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(grep -o -w -E 'avx512f|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')$(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "search: boards $sizes, $visits visits, threads $threads, $rounds rounds${ENGINE_OVERRIDE:+; engine overrides $ENGINE_OVERRIDE}"
# Each run's final result line per thread count, as "search SIZE WHO THREADS VISITS/S"
# (KataGo redraws its progress line with carriage returns).
results() { # size who
  tr '\r' '\n' | sed -n "/nnEvals/s/^numSearchThreads = *\([0-9]*\):.*visits\/s = \([0-9.]*\).*/search $1 $2 \1 \2/p" | tee -a "$out"
}
for round in $(seq "$rounds"); do
  for size in ${sizes//,/ }; do
    "$engine" benchmark -model "$model" -config "$here/configs/gtp.toml" -v "$visits" -t "$threads" \
      -boardsize "$size" ${ENGINE_OVERRIDE:+-override-config "$ENGINE_OVERRIDE"} 2>/dev/null |
      results "$size" engine
    "$katago" benchmark -model "$model" -config "$kcfg" -v "$visits" -t "$threads" \
      -boardsize "$size" 2>/dev/null | results "$size" katago
  done
done
if [ "${ANALYSIS:-1}" != 0 ]; then
  [ -f "$kacfg" ] || { echo "benchmark_vs_katago.sh: no KataGo analysis config at $kacfg (set KATAGO_ANALYSIS_CFG, or ANALYSIS=0)" >&2; exit 2; }
  echo "analysis: benches/analysis_throughput.sh, $rounds rounds, analysis threads $threads"
  # Its per-run lines, as "analysis 19 WHO THREADS POSITIONS/S".
  ENGINE="$engine" MODEL="$model" KATAGO="$katago" KATAGO_CONFIG="$kacfg" ENGINE_OVERRIDES="${ENGINE_OVERRIDE:-}" \
    "$here/benches/analysis_throughput.sh" "$rounds" ${threads//,/ } |
    sed -n 's/^  threads=\([0-9]*\): \(engine\|KataGo\) \([0-9.]*\) positions\/s.*/analysis 19 \2 \1 \3/p' |
    sed 's/ KataGo / katago /' | tee -a "$out"
fi
python3 - "$out" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    kind, size, who, t, v = line.split()
    runs[kind, int(size), who, int(t)].append(float(v))
rows = sorted({(k, s) for k, s, _, _ in runs}, key=lambda r: (r[0] != "search", r[1]))
threads = sorted({t for *_, t in runs})
print()
head = "| what | " + " | ".join(f"{t} thread{'s' if t > 1 else ''}: engine / KataGo (ratio)" for t in threads) + " |"
print(head)
print("|" + " --- |" * (len(threads) + 1))
for kind, size in rows:
    unit = "visits/s" if kind == "search" else "positions/s"
    cells = []
    for t in threads:
        e, k = runs.get((kind, size, "engine", t)), runs.get((kind, size, "katago", t))
        if not e or not k:
            cells.append("-")
            continue
        me, mk = statistics.median(e), statistics.median(k)
        digits = 1 if kind == "search" else 2
        cells.append(f"{me:.{digits}f} / {mk:.{digits}f} ({me / mk:.2f})")
    print(f"| {kind} {size}x{size}, {unit} | " + " | ".join(cells) + " |")
PY
