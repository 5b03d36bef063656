#!/usr/bin/env bash
# RUSTC_WRAPPER for `scripts/fuzz.sh` with FUZZ_QUICK_BUILD=1: the two big
# crates (engine, tch) are built at opt-level FUZZ_QUICK_OPT_LEVEL (default 1)
# with 16 codegen units instead of cargo-afl's `-C opt-level=3
# -C codegen-units=1`, which takes the better part of an hour on a busy
# 2-core machine. Coverage instrumentation, debug assertions and overflow
# checks are unchanged (rustc takes the last of repeated -C options, and
# these come after cargo-afl's). Execs are slower than at opt-level 3.
rustc="$1"
shift
case " $* " in
  *" --crate-name engine "* | *" --crate-name tch "*)
    exec "$rustc" "$@" -C opt-level="${FUZZ_QUICK_OPT_LEVEL:-1}" -C codegen-units=16
    ;;
esac
exec "$rustc" "$@"
