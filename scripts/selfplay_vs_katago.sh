#!/usr/bin/env bash
# Self-play throughput of `engine selfplay` against `katago selfplay`, same
# settings, alternated in one run (issue: "engine selfplay", throughput).
#
#   scripts/selfplay_vs_katago.sh KATAGO_BIN KATAGO_SELFPLAY_CFG [ROUNDS] [GAMES]
#   (or KATAGO and KATAGO_CONFIG in the environment; ENGINE_SHARED_DIR for ../shared;
#   ENGINE for another engine binary than target/release/engine)
#
# KATAGO_BIN is a KataGo 1.17.2 build (e.g. its Eigen backend built from
# source: cmake -DUSE_BACKEND=EIGEN -DUSE_AVX2=1), KATAGO_SELFPLAY_CFG its
# cpp/configs/training/selfplay1.cfg. Both engines get the same overrides
# (9x9, maxVisits 100, cheap searches of 25 visits, the g170 net) and play
# GAMES games per round (each finishes the games it has in flight). Prints,
# per run, wall seconds, games and rows written, and games/hour and
# rows/hour; rows are counted from the written .npz headers.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
katago="${1:-${KATAGO:?give the KataGo 1.17.2 binary as the first argument or in KATAGO}}"
kcfg="${2:-${KATAGO_CONFIG:?give the KataGo selfplay .cfg as the second argument or in KATAGO_CONFIG}}"
rounds="${3:-2}"
games="${4:-16}"
shared="${ENGINE_SHARED_DIR:-$root/../shared}"
engine="${ENGINE:-$root/target/release/engine}"
work="$(mktemp -d /tmp/selfplay-vs-katago.XXXXXX)"
mkdir -p "$work/models/g170"
cp "$shared/models/g170-b6c96-s175395328-d26788732.bin.gz" "$work/models/g170/model.bin.gz"

common="bSizes=9,bSizeRelProbs=1,maxVisits=100,cheapSearchVisits=25,numGameThreads=8,nnMaxBatchSize=8"

count() { # dir -> "games rows"
  python3 - "$1" <<'PY'
import ast, glob, struct, sys, zipfile
rows = 0
for f in glob.glob(sys.argv[1] + "/**/tdata/*.npz", recursive=True):
    with zipfile.ZipFile(f) as z:
        name = next(n for n in z.namelist() if n.startswith("globalTargetsNC"))
        with z.open(name) as m:
            head = m.read(10)
            hlen = struct.unpack("<H", head[8:10])[0]
            rows += ast.literal_eval(m.read(hlen).decode())["shape"][0]
games = sum(sum(1 for line in open(f) if line.strip())
            for f in glob.glob(sys.argv[1] + "/**/sgfs/*.sgfs", recursive=True))
print(games, rows)
PY
}

run() { # name command...
  local name="$1"; shift
  local out="$work/out-$name-$RANDOM"
  local start end
  start=$(date +%s.%N)
  "$@" -output-dir "$out" >"$out.log" 2>&1
  end=$(date +%s.%N)
  read -r g r < <(count "$out")
  python3 -c "
s=$end-$start; g=$g; r=$r
print(f'$name: {s:7.1f} s  games {g:4d}  rows {r:6d}  games/h {g*3600/s:8.0f}  rows/h {r*3600/s:9.0f}')"
}

echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'); load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$rounds"); do
  run engine "$engine" selfplay -config "$root/configs/selfplay.toml" -models-dir "$work/models" \
    -max-games-total "$games" -override-config "$common"
  run katago "$katago" selfplay -config "$kcfg" -models-dir "$work/models" \
    -max-games-total "$games" -override-config "$common,logSearchInfo=false"
done
echo "outputs and logs in $work"
