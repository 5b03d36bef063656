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
src="${KATAGO_SRC:?set KATAGO_SRC to a KataGo source tree with a build in cpp/build}"
shared="${ENGINE_SHARED_DIR:-$root/../shared}"
objs="$src/cpp/build/CMakeFiles/katago.dir"
[ -f "$objs/search/patternbonustable.cpp.o" ] || { echo "no KataGo build objects in $objs" >&2; exit 2; }
[ -d "$shared/vectors/games" ] || { echo "shared data not found at $shared (set ENGINE_SHARED_DIR)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/cpp/tools"
cp "$root/scripts/katago_pattern_bonus_vectors.cpp" "$work/cpp/tools/"
# The program includes KataGo's headers by relative path, as KataGo's own files do.
for d in core game dataio search neuralnet external program; do ln -s "$src/cpp/$d" "$work/cpp/$d"; done
mapfile -t objects < <(find "$objs" -name '*.o' ! -name 'main.cpp.o' ! -path '*/command/*' ! -path '*/tests/*')
c++ -std=c++17 -O1 -I"$src/cpp/external" -I"$src/cpp/external/tclap-1.2.2/include" \
  "$work/cpp/tools/katago_pattern_bonus_vectors.cpp" "${objects[@]}" -lz -lzip -lpthread -o "$work/vectors"
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
