#!/usr/bin/env bash
# Plays one full 19x19 game between two human-like bots on KataGo's
# human5k settings (configs/gtp_human5k.toml): Black with humanSLProfile
# rank_5k, White with rank_1d, through ../shared/tools/gtp_match.py, which
# checks every answer and scores the end with a referee.
#
#   scripts/human_game.sh [MAIN.bin.gz [HUMAN.bin.gz [OUT_DIR]]]
#
# MAIN defaults to the g170 b6c96 net of ENGINE_SHARED_DIR (../shared),
# HUMAN to the random test net models/test-human-sl/b6c96-fson-mish-meta.bin.gz
# (no real human SL net can be downloaded here: the game shows the
# plumbing, not human strength). The SGF goes to OUT_DIR (default a
# temporary folder, printed). delayMoveScale is 0 so that the game does not
# wait like a human.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${ENGINE_SHARED_DIR:-$root/../shared}"
main="${1:-$shared/models/g170-b6c96-s175395328-d26788732.bin.gz}"
human="${2:-$root/models/test-human-sl/b6c96-fson-mish-meta.bin.gz}"
out="${3:-$(mktemp -d)}"
engine="$root/target/release/engine"
[ -x "$engine" ] || { echo "build first: cargo build --release" >&2; exit 2; }
bot() {
  echo "$engine gtp -model $main -human-model $human -config $root/configs/gtp_human5k.toml" \
    "-override-config humanSLProfile=$1,delayMoveScale=0,logAllGTPCommunication=false,logSearchInfo=false"
}
python3 "$shared/tools/gtp_match.py" --black "$(bot rank_5k)" --white "$(bot rank_1d)" \
  --games 1 --size 19 --komi 6.5 --maxmoves 600 --sgf-dir "$out" --referee tromp-taylor
echo "SGF in $out"
