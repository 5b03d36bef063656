#!/usr/bin/env bash
# Writes tests/data/pattern_bonus/katago_vectors.txt: KataGo 1.17.2's own
# pattern bonus hashes and tables for a few games, which
# src/search/pattern_bonus.rs' tests compare with ours.
#
#   KATAGO_SRC=../KataGo scripts/katago_pattern_bonus_vectors.sh
#
# KATAGO_SRC is a KataGo source tree whose cpp/build holds a finished build
# (cmake -DUSE_BACKEND=EIGEN ...; make): the program links its objects.
# ENGINE_SHARED_DIR (default ../shared) gives the games from vectors/games.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${ENGINE_SHARED_DIR:-$root/../shared}"
[ -d "$shared/vectors/games" ] || { echo "shared data not found at $shared (set ENGINE_SHARED_DIR)" >&2; exit 2; }
source "$root/scripts/katago_harness.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
build_katago_harness "$root/scripts/katago_pattern_bonus_vectors.cpp" "$work/vectors"
games=(game_007_19x19_area.sgf game_001_13x13_area.sgf game_004_9x9_territory.sgf)
for g in "${games[@]}"; do cp "$shared/vectors/games/$g" "$work/"; done
cp "$root/tests/data/pattern_bonus/"*.sgf "$work/"
out="$root/tests/data/pattern_bonus/katago_vectors.txt"
{
  echo "# KataGo 1.17.2 PatternBonusTable: scripts/katago_pattern_bonus_vectors.sh"
  echo "run 0.3 0.5 0 100 - shapes.sgf ${games[*]}"
  (cd "$work" && ./vectors 0.3 0.5 0 100 - shapes.sgf "${games[@]}")
  echo "run 0.25 0.8 10 2 Alice shapes.sgf ${games[*]}"
  # The same games: their move hashes once are enough.
  (cd "$work" && ./vectors 0.25 0.8 10 2 Alice shapes.sgf "${games[@]}") | grep -v '^move \|^game '

} > "$out"
echo "wrote $out ($(grep -c '^entry' "$out") entries)"
