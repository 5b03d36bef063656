#!/usr/bin/env bash
# `antiMirror` at work: the engine as White against a mirror-Go player
# (scripts/mirror_bot.py: Black takes the centre, then answers every move
# with its reflection) with `genmoveAntiMirror` on and off, and KataGo
# 1.17.2 the same way when KATAGO is set. With komi KOMI (default 0.5,
# area scoring) a mirror held to the end wins Black the game by half a
# point: KataGo's "difficult" case. Prints White's wins per player.
#
#   scripts/anti_mirror_match.sh [GAMES] [VISITS] [SIZE]
#   KATAGO="$(command -v katago)" KATAGO_SRC=../KataGo scripts/anti_mirror_match.sh 10 100 9
#
# Both use the g170 b6c96 net (ENGINE_SHARED_DIR or ../shared), or MODEL;
# ours runs with configs/gtp.toml, KataGo with KATAGO_CONFIG or its
# gtp_example.cfg from KATAGO_SRC. One search thread each; Chinese rules;
# games are scored by the built-in Tromp-Taylor counter of gtp_match.py.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
games="${1:-10}"
visits="${2:-100}"
size="${3:-9}"
komi="${KOMI:-0.5}"
shared="${ENGINE_SHARED_DIR:-$here/../shared}"
engine="${ENGINE:-$here/target/release/engine}"
model="${MODEL:-$shared/models/g170-b6c96-s175395328-d26788732.bin.gz}"
kcfg="${KATAGO_CONFIG:-${KATAGO_SRC:+$KATAGO_SRC/cpp/configs/gtp_example.cfg}}"
[ -x "$engine" ] || { echo "anti_mirror_match.sh: build the engine first (cargo build --release) or set ENGINE" >&2; exit 2; }
[ -f "$shared/tools/gtp_match.py" ] || { echo "anti_mirror_match.sh: $shared/tools/gtp_match.py is missing: set ENGINE_SHARED_DIR to the shared test data" >&2; exit 2; }
if [ -n "${KATAGO:-}" ] && [ -z "$kcfg" ]; then
  echo "anti_mirror_match.sh: with KATAGO, set KATAGO_CONFIG (a gtp config) or KATAGO_SRC (its source tree)" >&2
  exit 2
fi
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; ${size}x${size}, komi $komi, $visits visits, $games games each"
run() { # label white-command
  local label="$1" white="$2"
  python3 "$shared/tools/gtp_match.py" --black "python3 $here/scripts/mirror_bot.py --seed 7" \
    --white "$white" --games "$games" --size "$size" --komi "$komi" --referee tromp-taylor \
    --setup-b "kata-set-rules chinese" \
    --move-timeout 300 >"$logs/$label.txt" 2>&1 || true
  # gtp_match.py's summary: engine A is Black (the mirror bot), B White.
  echo "== $label (White)"
  grep -E '^A wins [0-9]+ \(|^ +[0-9]+ +A +B ' "$logs/$label.txt" || tail -5 "$logs/$label.txt"
}
for anti in true false; do
  run "engine genmoveAntiMirror=$anti" \
    "$engine gtp -model $model -config $here/configs/gtp.toml -override-config maxVisits=$visits,numSearchThreads=1,genmoveAntiMirror=$anti,logAllGTPCommunication=false"
  if [ -n "${KATAGO:-}" ]; then
    run "KataGo genmoveAntiMirror=$anti" \
      "$KATAGO gtp -model $model -config $kcfg -override-config maxVisits=$visits,numSearchThreads=1,genmoveAntiMirror=$anti,logDir=,logFile=/dev/null"
  fi
done
