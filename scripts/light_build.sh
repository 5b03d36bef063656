#!/usr/bin/env bash
# Builds the light CPU-only engine (cargo's --no-default-features: no
# libtorch, every net on the pure-Rust CPU backend) into target/light and
# checks that it is what the README says: no libtorch linked, and engine
# gtp, analysis, benchmark, tune, selfplay, shuffle and match work on the
# project's nets (models/), while engine train, export and learn say
# that they need the libtorch build. Then runs the unit tests and the network parity tests
# (the Rust backend against KataGo 1.17.2's outputs) in that build.
#
#   scripts/light_build.sh            # build, smoke checks, tests
#   LIGHT_SKIP_TESTS=1 scripts/light_build.sh   # build and smoke checks only
#
# The build needs no virtualenv; the parity tests read KaTrain's bundled net
# from .venv/katrain, which ./setup.sh fetches (CI runs it first). Prints the
# build time and the binary's size; exits non-zero on the first failed
# check. .ci/run calls it after the README's test command.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
target="$root/target/light"
engine="$target/release/engine"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

fail() { echo "light_build: FAIL: $*" >&2; exit 1; }
step() { echo "light_build: $*" >&2; }

# Anything libtorch-related in the environment must not matter.
unset LIBTORCH LIBTORCH_USE_PYTORCH
start=$(date +%s)
cargo build --release --no-default-features --target-dir "$target"
step "built in $(( $(date +%s) - start )) s (a clean target/light builds every dependency too)"
step "binary: $(du -h "$engine" | cut -f1) ($engine; $(strip -o "$work/engine.stripped" "$engine" && du -h "$work/engine.stripped" | cut -f1) stripped)"

# Library names only: ldd's load addresses are random hex and can hold "c10".
linked="$(ldd "$engine" | awk '{print $1}')"
if grep -Eq '^lib(torch|c10|gomp)' <<< "$linked"; then
  echo "$linked" >&2
  fail "the light build links libtorch"
fi
"$engine" version | tee "$work/version" >&2
grep -q "libtorch: not in this build" "$work/version" || fail "engine version does not say it has no libtorch"

net="$root/models/training-run/engine-9x9-b4c32-gen60.bin.gz"
quiet="logAllGTPCommunication=false,logSearchInfo=false,logToStderr=false"

step "gtp: the README's main command, two moves on 9x9"
printf 'boardsize 9\nclear_board\ngenmove b\ngenmove w\nkata-get-models\nquit\n' |
  "$engine" gtp -config configs/gtp.toml -override-config "maxVisits=16,$quiet" \
    > "$work/gtp.out" 2> "$work/gtp.err" || { cat "$work/gtp.err" >&2; fail "engine gtp"; }
[ "$(grep -cE '^= [A-HJ-T][1-9]$|^= pass$' "$work/gtp.out")" = 2 ] ||
  { cat "$work/gtp.out" "$work/gtp.err" >&2; fail "engine gtp did not answer two moves"; }
grep -q "Rust backend" "$work/gtp.err" || { cat "$work/gtp.err" >&2; fail "gtp start-up line names no Rust backend"; }

step "gtp: a libtorch-only setting is refused with a clear message"
if printf 'quit\n' | "$engine" gtp -config configs/gtp.toml \
    -override-config "nnCpuBackend=libtorch,$quiet" > /dev/null 2> "$work/refused.err"; then
  fail "nnCpuBackend=libtorch was accepted"
fi
grep -q "built without it" "$work/refused.err" || { cat "$work/refused.err" >&2; fail "no clear message for nnCpuBackend=libtorch"; }

step "analysis: one query"
echo '{"id":"q","moves":[["B","E5"]],"rules":"tromp-taylor","komi":7,"boardXSize":9,"boardYSize":9,"maxVisits":16}' |
  "$engine" analysis -model "$net" -config configs/analysis.toml -override-config logToStderr=false \
    > "$work/analysis.out" 2> "$work/analysis.err" || { cat "$work/analysis.err" >&2; fail "engine analysis"; }
grep -q '"moveInfos"' "$work/analysis.out" || { cat "$work/analysis.out" "$work/analysis.err" >&2; fail "no analysis answer"; }

step "benchmark"
"$engine" benchmark -model "$net" -config configs/gtp.toml -v 32 -t 1 -n 2 -boardsize 9 \
  > "$work/bench.out" 2>&1 || { cat "$work/bench.out" >&2; fail "engine benchmark"; }
grep -q "visits/s" "$work/bench.out" || { cat "$work/bench.out" >&2; fail "no visits/s from benchmark"; }

step "selfplay: one 9x9 game"
"$engine" selfplay -config configs/selfplay.toml -model "$net" -output-dir "$work/sp" \
  -max-games-total 1 -override-config "bSizes=9,bSizeRelProbs=1,maxVisits=8,cheapSearchVisits=4,reducedVisitsMin=4,numGameThreads=2,maxMovesPerGame=80" \
  > "$work/sp.out" 2>&1 || { tail -20 "$work/sp.out" >&2; fail "engine selfplay"; }
ls "$work"/sp/*/tdata/*.npz > /dev/null 2>&1 || { tail -20 "$work/sp.out" >&2; fail "selfplay wrote no .npz"; }

step "shuffle: that game's rows"
"$engine" shuffle "$work/sp" -out-dir "$work/shuf/w" -out-tmp-dir "$work/shuf/w.tmp" -min-rows 1 \
  -keep-target-rows 1000 -approx-rows-per-out-file 1000 > "$work/shuf.out" 2>&1 ||
  { tail -20 "$work/shuf.out" >&2; fail "engine shuffle"; }
ls "$work"/shuf/w/*.npz > /dev/null 2>&1 || { tail -20 "$work/shuf.out" >&2; fail "shuffle wrote no .npz"; }

step "tune: the Rust backend alone"
"$engine" tune -model "$net" -boardsize 9 -visits 8 -n 2 -rounds 0 -output "$work/tuned.toml" \
  > "$work/tune.out" 2>&1 || { cat "$work/tune.out" >&2; fail "engine tune"; }
grep -q 'nnCpuBackend = "rust"  # engine tune' "$work/tuned.toml" || { cat "$work/tune.out" >&2; fail "tune did not write the Rust backend"; }
grep -q "libtorch" "$work/tune.out" && { cat "$work/tune.out" >&2; fail "tune tried libtorch in the light build"; }

step "match: two 9x9 games"
"$engine" match -bot a="$net",maxVisits=8 -bot b="$net",maxVisits=4 -games 2 -boardsize 9 -komi 7 \
  -sgf-output-dir "$work/match" > "$work/match.out" 2>&1 || { tail -20 "$work/match.out" >&2; fail "engine match"; }
[ "$(ls "$work"/match/*.sgf* 2>/dev/null | wc -l)" -ge 1 ] || { tail -20 "$work/match.out" >&2; fail "match wrote no SGF"; }

for cmd in train export learn; do
  step "$cmd: says it needs the libtorch build"
  set +e
  "$engine" "$cmd" -h-anything > /dev/null 2> "$work/$cmd.err"
  code=$?
  set -e
  [ "$code" = 2 ] || fail "engine $cmd exited $code, not 2"
  grep -q "built without libtorch.*which engine $cmd needs" "$work/$cmd.err" || { cat "$work/$cmd.err" >&2; fail "engine $cmd gave no clear message"; }
done

if [ -z "${LIGHT_SKIP_TESTS:-}" ]; then
  step "unit tests and network parity tests without libtorch"
  cargo test --release --no-default-features --target-dir "$target" --lib --test nn_parity
fi
step "all checks passed"
