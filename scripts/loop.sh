#!/usr/bin/env bash
# The learning loop on one machine, in turns (KataGo's synchronous_loop.sh):
# now `engine learn -synchronous`, which owns the run's files, its ledger
# and its restarts. This wrapper only keeps the old command line working.
#
#   scripts/loop.sh BASE_DIR [LEARN_CONFIG] [GAMES_PER_GENERATION]
#
# LEARN_CONFIG defaults to configs/learn.toml, GAMES_PER_GENERATION to 200.
# ENGINE (default target/release/engine) is the binary. Kill it at any
# moment and run the same command to go on; `engine learn -store BASE_DIR
# status` shows the generations.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base="${1:?usage: scripts/loop.sh BASE_DIR [LEARN_CONFIG] [GAMES_PER_GENERATION]}"
config="${2:-$here/configs/learn.toml}"
games="${3:-200}"
engine="${ENGINE:-$here/target/release/engine}"
[ -x "$engine" ] || { echo "no engine binary at $engine (build it: ./setup.sh cargo build --release)" >&2; exit 2; }
export OMP_WAIT_POLICY=PASSIVE
exec "$engine" learn -store "$base" -config "$config" -synchronous "$games"
