# Sourced by the scripts that print KataGo's own answers with a small C++
# program linked against a KataGo build (katago_pattern_bonus_vectors.sh,
# katago_metadata_vectors.sh).
#
#   build_katago_harness PROGRAM.cpp OUT_BINARY
#
# The sources go beside OUT_BINARY (in the caller's scratch folder, which
# the caller removes).
# KATAGO_SRC is a KataGo source tree whose cpp/build holds a finished build
# (cmake -DUSE_BACKEND=EIGEN ...; make). The program includes KataGo's
# headers by relative path, as KataGo's own files do, so it is compiled from
# a scratch cpp/tools/ folder beside links to KataGo's sources.
build_katago_harness() {
  local program="$1" out="$2"
  local src="${KATAGO_SRC:?set KATAGO_SRC to a KataGo source tree with a build in cpp/build}"
  local objs="$src/cpp/build/CMakeFiles/katago.dir"
  [ -f "$objs/search/search.cpp.o" ] || { echo "no KataGo build objects in $objs" >&2; return 2; }
  local work
  work="$(dirname "$out")/harness-src"
  mkdir -p "$work/cpp/tools"
  cp "$program" "$work/cpp/tools/"
  local d
  for d in core game dataio search neuralnet external program; do ln -s "$src/cpp/$d" "$work/cpp/$d"; done
  local objects
  mapfile -t objects < <(find "$objs" -name '*.o' ! -name 'main.cpp.o' ! -path '*/command/*' ! -path '*/tests/*')
  c++ -std=c++17 -O1 -I"$src/cpp/external" -I"$src/cpp/external/tclap-1.2.2/include" \
    "$work/cpp/tools/$(basename "$program")" "${objects[@]}" -lz -lzip -lpthread -o "$out"
}
