#!/usr/bin/env bash
# Equal-visits match against KataGo 1.17.2 with the same net, both with
# graph search, through ../shared/tools/gtp_match.py (colours alternate):
#
#   KATAGO=<katago binary> KATAGO_CONFIG=<its gtp_example.cfg> \
#       scripts/match_vs_katago.sh SIZE KOMI GAMES [OUT_DIR]
#
# The engine runs configs/gtp.toml, KataGo its gtp_example.cfg, each with
# maxVisits=$VISITS (default 100) and one search thread; the net is g170
# b6c96 unless NET is set. SGFs and the match log go to OUT_DIR (default a
# new temporary folder, printed). ENGINE (default target/release/engine) and
# SHARED (default $ENGINE_SHARED_DIR, else ../shared) may be set.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
katago="${KATAGO:?set KATAGO to the katago binary}"
katago_config="${KATAGO_CONFIG:?set KATAGO_CONFIG to the gtp_example.cfg of KataGo}"
size="${1:?board size}"
komi="${2:?komi}"
games="${3:?number of games}"
out="${4:-$(mktemp -d)}"
engine="${ENGINE:-$root/target/release/engine}"
shared="${SHARED:-${ENGINE_SHARED_DIR:-$root/../shared}}"
[ -d "$shared" ] || { echo "no shared data at $shared (set SHARED or ENGINE_SHARED_DIR)" >&2; exit 2; }
net="${NET:-$shared/models/g170-b6c96-s175395328-d26788732.bin.gz}"
visits="${VISITS:-100}"
mkdir -p "$out"
echo "match_vs_katago: SGFs and log in $out" >&2
python3 "$shared/tools/gtp_match.py" \
    --black "$engine gtp -model $net -config $root/configs/gtp.toml -override-config maxVisits=$visits,numSearchThreads=1" \
    --white "$katago gtp -model $net -config $katago_config -override-config maxVisits=$visits,numSearchThreads=1,logDir=,logFile=/dev/null" \
    --alternate --games "$games" --size "$size" --komi "$komi" --sgf-dir "$out" \
    | tee "$out/match.log"
