#!/usr/bin/env bash
# KaTrain 1.20's own engine and AI code driving `engine analysis`
# (scripts/katrain_human_play.py, no display needed):
#   1. its human-style AIs, Black `ai:human` (8k) against White `ai:pro`
#      (1914), with g170 as the main net and the random human test net as
#      -human-model, MOVES moves (default 120);
#   2. its default AI on both sides with KaTrain's own bundled net
#      (b10c384h6nbttflrs, which setup.sh unpacks into .venv/katrain), 10 moves.
# KaTrain is installed from PyPI into KATRAIN_VENV (default .venv/katrain-app)
# the first time. ENGINE (default target/release/engine) and SHARED (default $ENGINE_SHARED_DIR, else
# ../shared) may be set. Exit status 1 if KaTrain logs an error or reads a
# field it cannot use.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
engine="${ENGINE:-$root/target/release/engine}"
shared="${SHARED:-${ENGINE_SHARED_DIR:-$root/../shared}}"
[ -d "$shared" ] || { echo "no shared data at $shared (set SHARED or ENGINE_SHARED_DIR)" >&2; exit 2; }
venv="${KATRAIN_VENV:-$root/.venv/katrain-app}"
moves="${MOVES:-120}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import katrain" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "katrain==1.20.0"
fi
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
run() { HOME="$home" "$venv/bin/python" "$root/scripts/katrain_human_play.py" --engine "$engine" "$@"; }

run --model "$shared/models/g170-b6c96-s175395328-d26788732.bin.gz" \
    --human-model "$root/models/test-human-sl/b6c96-fson-mish-meta.bin.gz" \
    --moves "$moves" --visits 16
run --model "$root/.venv/katrain/b10c384h6nbttflrs.bin.gz" --default-ai --moves 10 --visits 16
