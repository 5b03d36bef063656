#!/usr/bin/env bash
# Coverage-guided fuzzing of every parser of outside input, on STABLE Rust:
# AFL++ through cargo-afl (rustc's stable SanitizerCoverage flags; no
# sanitizer, the code is safe Rust: what we look for are panics, overflows
# (the build has debug assertions and overflow checks on), hangs and runaway
# memory).
#
#   scripts/fuzz.sh [MINUTES] [TARGET...]
#
# Targets (default: all): gtp_lines analysis_queries sgf config model_file
# npz npy selfplay_settings match_settings gatekeeper_settings match_args
# train_json shuffle_summary checkpoint. Their bodies are in src/fuzz_targets/ (engine::fuzz_targets), shared
# with tests/fuzz_regressions.rs; fuzz/src/bin/ only wraps them in afl's
# `fuzz!`.
#
# The script installs cargo-afl (and builds AFL++ with it) the first time,
# writes each target's seed corpus from ../shared (KataGo's vectors, configs,
# heads of the test nets, its npz files), the repository's configs, README
# and tests/data/train (see src/fuzz_targets/seeds*.rs), runs
# each target for MINUTES minutes (default 5), one after the other, and
# prints per target: execs, execs/s, seconds, crashes and hangs (the same
# table goes to fuzz/last-run.txt). Each crashing input is copied to
# tests/data/fuzz_crashes/TARGET/, where tests/fuzz_regressions.rs replays
# it; inputs that made new coverage are kept in fuzz/corpus/TARGET/ for the
# next run.
#
# Environment: ENGINE_SHARED_DIR (the shared data, default ../shared),
# AFL_OPT_LEVEL (cargo-afl's optimisation level for every crate, default 3),
# FUZZ_QUICK_BUILD=1 (build only the engine and tch crates at opt-level 1
# with 16 codegen units, see fuzz/quick-build-rustc.sh: minutes instead of
# most of an hour on a busy 2-core machine), FUZZ_NICE (niceness of the
# fuzzers, default 10), KATAGO_SRC (a KataGo source tree or git mirror whose
# example configs join the config seeds; optional).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
minutes="${1:-5}"
shift || true
all=(gtp_lines analysis_queries sgf config model_file npz npy selfplay_settings match_settings
  gatekeeper_settings match_args train_json shuffle_summary checkpoint)
if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  targets=("${all[@]}")
fi
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || { echo "fuzz.sh: unknown target $t (one of: ${all[*]})" >&2; exit 2; }
done
[[ "$minutes" =~ ^[0-9]+$ ]] && [ "$minutes" -gt 0 ] || { echo "fuzz.sh: MINUTES must be a positive whole number" >&2; exit 2; }
shared="${ENGINE_SHARED_DIR:-$root/../shared}"
[ -d "$shared" ] || { echo "fuzz.sh: shared data not found at $shared (set ENGINE_SHARED_DIR)" >&2; exit 2; }
nice_level="${FUZZ_NICE:-10}"

# --- tools (idempotent) -------------------------------------------------
afl_version=0.18.2 # the same as the `afl` crate in fuzz/Cargo.toml
if ! cargo afl --version 2>/dev/null | grep -q "$afl_version"; then
  cargo install cargo-afl --version "$afl_version" --locked
fi
# `cargo afl config --build` compiles AFL++ itself (afl-fuzz and its
# runtime) for this rustc; once that is done it fails saying so.
if ! msg="$(cargo afl config --build 2>&1)"; then
  grep -q "already built" <<<"$msg" || { echo "$msg" >&2; exit 1; }
fi

fuzz="$root/fuzz"
corpus="$fuzz/corpus"
out="$fuzz/out"
crashes="$root/tests/data/fuzz_crashes"

# --- build ---------------------------------------------------------------
cd "$fuzz"
if [ "${FUZZ_QUICK_BUILD:-0}" = 1 ]; then
  export RUSTC_WRAPPER="$fuzz/quick-build-rustc.sh"
fi
"$root/setup.sh" cargo afl build --release
bin="$fuzz/target/release"
# The engine's build.rs bakes libtorch's folder into the engine binary only;
# these binaries find it through the loader path.
torchlib="$(ls -d "$root"/.venv/lib/python3*/site-packages/torch/lib 2>/dev/null | head -1 || true)"
[ -n "${LIBTORCH:-}" ] && torchlib="$LIBTORCH/lib"
export LD_LIBRARY_PATH="${torchlib:+$torchlib:}${LD_LIBRARY_PATH:-}"

# --- seed corpora (rewritten each run; what the fuzzer found stays too) ---
"$bin/seeds" "$shared" "$root" "$corpus"
# KataGo's own example configs as extra config seeds, when KATAGO_SRC names a
# KataGo source tree or git mirror (optional: without it only our configs
# are seeds).
kg="${KATAGO_SRC:-}"
if [ -z "$kg" ]; then
  echo "fuzz.sh: KATAGO_SRC is not set: KataGo's example configs are not added to the config seeds" >&2
elif [ -d "$kg" ]; then
  for c in gtp_example analysis_example; do
    # A work tree has the file; a bare mirror (no work tree) has it in HEAD.
    cp "$kg/cpp/configs/$c.cfg" "$corpus/config/seed-katago-$c.cfg" 2>/dev/null \
      || git -C "$kg" show "HEAD:cpp/configs/$c.cfg" >"$corpus/config/seed-katago-$c.cfg" 2>/dev/null \
      || rm -f "$corpus/config/seed-katago-$c.cfg"
  done
fi

# --- run each target in turn ----------------------------------------------
export AFL_SKIP_CPUFREQ=1                      # no CPU governor to read here
export AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 # core_pattern is not ours to set
export AFL_NO_AFFINITY=1                       # a shared machine: do not pin a core
export AFL_NO_UI=1                             # a log, not a screen
export AFL_IGNORE_SEED_PROBLEMS=1              # a seed that times out is skipped, not fatal
afl_stat() { # file key...: the first key present
  local f="$1"; shift
  for k in "$@"; do
    local v
    v="$(sed -n "s/^$k *: *//p" "$f" 2>/dev/null | head -1)"
    [ -n "$v" ] && { echo "$v"; return; }
  done
  echo "?"
}
summary="$fuzz/last-run.txt"
{
  echo "# scripts/fuzz.sh $minutes ${targets[*]}  ($(date -u '+%Y-%m-%d %H:%M UTC'); $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores; AFL++ via cargo-afl $afl_version, AFL_OPT_LEVEL=${AFL_OPT_LEVEL:-3}, FUZZ_QUICK_BUILD=${FUZZ_QUICK_BUILD:-0})"
  printf '%-18s %12s %8s %8s %8s %6s\n' target execs exec/s seconds crashes hangs
} | tee "$summary"
for t in "${targets[@]}"; do
  max_len=8192
  case "$t" in model_file | npz | checkpoint) max_len=131072 ;; esac
  rm -rf "${out:?}/$t"
  mkdir -p "$out/$t" "$crashes/$t"
  log="$out/$t.log"
  set +e
  nice -n "$nice_level" cargo afl fuzz -i "$corpus/$t" -o "$out/$t" -V $((minutes * 60)) \
    -G "$max_len" -t 10000+ -- "$bin/$t" >"$log" 2>&1
  rc=$?
  set -e
  stats="$out/$t/default/fuzzer_stats"
  if [ ! -f "$stats" ]; then
    echo "fuzz.sh: $t did not start (exit $rc); the end of $log:" >&2
    tail -20 "$log" >&2
    printf '%-18s %12s %8s %8s %8s %6s\n' "$t" failed - - - - | tee -a "$summary"
    continue
  fi
  n_crash=0
  for f in "$out/$t"/default/crashes/id:*; do
    [ -f "$f" ] || continue
    n_crash=$((n_crash + 1))
    cp "$f" "$crashes/$t/crash-$(sha1sum "$f" | cut -c1-16)"
  done
  n_hang=$(find "$out/$t/default/hangs" -name 'id:*' -type f 2>/dev/null | wc -l)
  # One sha1sum for the whole queue: a fork per file is slow on a busy machine.
  (cd "$out/$t/default/queue" && find . -maxdepth 1 -type f -name 'id:*' -exec sha1sum {} +) |
    while read -r hash f; do cp "$out/$t/default/queue/$f" "$corpus/$t/q-${hash:0:16}"; done
  printf '%-18s %12s %8s %8s %8s %6s\n' "$t" "$(afl_stat "$stats" execs_done)" \
    "$(afl_stat "$stats" execs_per_sec)" "$(afl_stat "$stats" run_time)" \
    "$n_crash" "$n_hang" | tee -a "$summary"
done
rmdir "$crashes"/* 2>/dev/null || true
echo "crash inputs (if any) are in $crashes/TARGET/; replay them with: ./setup.sh cargo test --release --test fuzz_regressions"
