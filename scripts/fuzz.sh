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
# builds the targets, and runs each target for MINUTES minutes (default 5;
# 0: no fuzzing, only the corpus minimisation below over what the last run
# left in fuzz/out/TARGET/),
# or until FUZZ_EXECS executions when that comes first, FUZZ_JOBS targets at
# a time (default 1). It prints per target: execs, execs/s, seconds, corpus
# size, crashes and hangs (the same table goes to fuzz/last-run.txt).
#
# Corpora: fuzz/corpus/TARGET/ is the committed seed corpus, minimised with
# afl-cmin (it keeps one input per coverage edge, the smallest). A run starts
# from it plus the seeds written from ../shared and the repository
# (src/fuzz_targets/seeds*.rs: GTP sessions, KataGo's analysis queries, SGFs,
# configs, whole small nets, npz files), and afterwards minimises all of that
# together with what AFL found back into fuzz/corpus/TARGET/ (inputs over
# FUZZ_CORPUS_MAX_BYTES, default 65536, are left out of it: the big seeds
# come back from ../shared each run). Commit the changed corpus.
# Each crashing input is copied to tests/data/fuzz_crashes/TARGET/, where
# tests/fuzz_regressions.rs replays it, as it replays every committed corpus
# input.
#
# Environment: ENGINE_SHARED_DIR (the shared data, default ../shared),
# AFL_OPT_LEVEL (cargo-afl's optimisation level for every crate, default 3),
# FUZZ_QUICK_BUILD=1 (build only the engine and tch crates at opt-level 1
# with 16 codegen units, see fuzz/quick-build-rustc.sh: minutes instead of
# most of an hour on a busy 2-core machine), FUZZ_NICE (niceness of the
# fuzzers, default 10), FUZZ_EXECS (stop a target after about this many
# executions), FUZZ_JOBS (targets run at once), KATAGO_SRC (a KataGo source
# tree or git mirror whose example configs join the config seeds; optional).
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
[[ "$minutes" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: MINUTES must be a whole number" >&2; exit 2; }
shared="${ENGINE_SHARED_DIR:-$root/../shared}"
[ -d "$shared" ] || { echo "fuzz.sh: shared data not found at $shared (set ENGINE_SHARED_DIR)" >&2; exit 2; }
nice_level="${FUZZ_NICE:-10}"
execs="${FUZZ_EXECS:-}"
[ -z "$execs" ] || [[ "$execs" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: FUZZ_EXECS must be a whole number" >&2; exit 2; }
parallel="${FUZZ_JOBS:-1}"
[[ "$parallel" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: FUZZ_JOBS must be a positive whole number" >&2; exit 2; }
corpus_max="${FUZZ_CORPUS_MAX_BYTES:-65536}"

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
corpus="$fuzz/corpus" # committed, minimised
work="$fuzz/work"     # each run's input: the corpus plus the generated seeds
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

# --- each target's input: committed corpus + generated seeds ---------------
# Per run (by process id), so that two runs on different targets can share
# the folder.
seeds="$work/seeds.$$"
rm -rf "$seeds"
mkdir -p "$seeds"
"$bin/seeds" "$shared" "$root" "$seeds"
# KataGo's own example configs as extra config seeds, when KATAGO_SRC names a
# KataGo source tree or git mirror (optional: without it only our configs
# are seeds).
kg="${KATAGO_SRC:-}"
if [ -z "$kg" ]; then
  echo "fuzz.sh: KATAGO_SRC is not set: KataGo's example configs are not added to the config seeds" >&2
elif [ -d "$kg" ]; then
  for c in gtp_example analysis_example; do
    # A work tree has the file; a bare mirror (no work tree) has it in HEAD.
    cp "$kg/cpp/configs/$c.cfg" "$seeds/config/seed-katago-$c.cfg" 2>/dev/null \
      || git -C "$kg" show "HEAD:cpp/configs/$c.cfg" >"$seeds/config/seed-katago-$c.cfg" 2>/dev/null \
      || rm -f "$seeds/config/seed-katago-$c.cfg"
  done
fi
for t in "${targets[@]}"; do
  rm -rf "${work:?}/in/$t"
  mkdir -p "$work/in/$t" "$corpus/$t"
  cp "$seeds/$t"/* "$work/in/$t/" 2>/dev/null || true
  cp "$corpus/$t"/* "$work/in/$t/" 2>/dev/null || true
done

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
summary="${FUZZ_SUMMARY:-$fuzz/last-run.txt}"
{
  echo "# ${execs:+FUZZ_EXECS=$execs }FUZZ_JOBS=$parallel scripts/fuzz.sh $minutes ${targets[*]}  ($(date -u '+%Y-%m-%d %H:%M UTC'); $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores; AFL++ via cargo-afl $afl_version, AFL_OPT_LEVEL=${AFL_OPT_LEVEL:-3}, FUZZ_QUICK_BUILD=${FUZZ_QUICK_BUILD:-0})"
  printf '%-18s %12s %8s %8s %7s %8s %6s\n' target execs exec/s seconds corpus crashes hangs
} | tee "$summary"
# cargo-afl's `cmin` runs AFL++ 4.40's afl-cmin.py, which finds no coverage
# tuples in these binaries (it keeps nothing); afl-cmin.awk of the same
# build works (and in seconds, where afl-cmin.bash takes most of an hour on
# a thousand inputs).
afl_bin="$(find "${XDG_DATA_HOME:-$HOME/.local/share}/afl.rs" -type d -path "*afl.rs-$afl_version/afl/bin" 2>/dev/null | head -1)"
[ -x "$afl_bin/afl-cmin.awk" ] || { echo "fuzz.sh: afl-cmin.awk not found under ~/.local/share/afl.rs" >&2; exit 1; }

# Minimises the run's input and everything AFL kept into the committed
# corpus; names are content hashes, so reruns do not rename files.
minimize_corpus() {
  local t="$1" pool="$out/$1/pool" min="$out/$1/min"
  rm -rf "$pool" "$min"
  mkdir -p "$pool"
  find "$work/in/$t" "$out/$t/default/queue" -maxdepth 1 -type f -size -$((corpus_max + 1))c \
    -exec cp -t "$pool" {} + 2>/dev/null || true
  # Queue names hold ':' and ','; rename to hashes first.
  (cd "$pool" && for f in *; do [ -f "$f" ] && mv -f "$f" "h-$(sha1sum "$f" | cut -c1-16)" 2>/dev/null; done) || true
  if AFL_PATH="$afl_bin" PATH="$afl_bin:$PATH" nice -n "$nice_level" \
    "$afl_bin/afl-cmin.awk" -i "$pool" -o "$min" -t 10000 -- "$bin/$t" >"$out/$t.cmin.log" 2>&1 &&
    [ -n "$(ls -A "$min" 2>/dev/null)" ]; then
    rm -rf "${corpus:?}/$t"
    mkdir -p "$corpus/$t"
    (cd "$min" && for f in *; do cp "$f" "$corpus/$t/$(sha1sum "$f" | cut -c1-16)"; done)
  else
    echo "fuzz.sh: afl-cmin failed on $t (see $out/$t.cmin.log); fuzz/corpus/$t is unchanged" >&2
  fi
}

# One target: fuzz, collect crashes, minimise the corpus, print its row.
fuzz_one() {
  local t="$1" max_len=8192
  case "$t" in model_file | npz | checkpoint) max_len=131072 ;; esac
  local log="$out/$t.log" rc=0
  if [ "$minutes" -gt 0 ]; then
    rm -rf "${out:?}/$t"
    mkdir -p "$out/$t" "$crashes/$t"
    nice -n "$nice_level" cargo afl fuzz -i "$work/in/$t" -o "$out/$t" -V $((minutes * 60)) \
      ${execs:+-E "$execs"} -G "$max_len" -t 10000+ -- "$bin/$t" >"$log" 2>&1 || rc=$?
  fi
  local stats="$out/$t/default/fuzzer_stats"
  if [ "$minutes" -eq 0 ]; then
    minimize_corpus "$t"
    printf '%-18s %12s %8s %8s %7s %8s %6s\n' "$t" "$(afl_stat "$stats" execs_done)" \
      "$(afl_stat "$stats" execs_per_sec)" "$(afl_stat "$stats" run_time)" \
      "$(find "$corpus/$t" -type f | wc -l)" - - | tee -a "$summary"
    return
  fi
  if [ ! -f "$stats" ]; then
    echo "fuzz.sh: $t did not start (exit $rc); the end of $log:" >&2
    tail -20 "$log" >&2
    printf '%-18s %12s %8s %8s %7s %8s %6s\n' "$t" failed - - - - - | tee -a "$summary"
    return
  fi
  local n_crash=0 f
  for f in "$out/$t"/default/crashes/id:*; do
    [ -f "$f" ] || continue
    n_crash=$((n_crash + 1))
    cp "$f" "$crashes/$t/crash-$(sha1sum "$f" | cut -c1-16)"
  done
  local n_hang
  n_hang=$(find "$out/$t/default/hangs" -name 'id:*' -type f 2>/dev/null | wc -l)
  minimize_corpus "$t"
  printf '%-18s %12s %8s %8s %7s %8s %6s\n' "$t" "$(afl_stat "$stats" execs_done)" \
    "$(afl_stat "$stats" execs_per_sec)" "$(afl_stat "$stats" run_time)" \
    "$(find "$corpus/$t" -type f | wc -l)" "$n_crash" "$n_hang" | tee -a "$summary"
}
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  fuzz_one "$t" &
done
wait
rm -rf "$seeds"
rmdir "$crashes"/* 2>/dev/null || true
echo "crash inputs (if any) are in $crashes/TARGET/; replay them with: ./setup.sh cargo test --release --test fuzz_regressions"
