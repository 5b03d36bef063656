#!/usr/bin/env bash
# CI: the Python package (python/, import name engine_go) built from this
# checkout and tested. Makes a fresh virtualenv in target/python-venv,
# runs `pip install ./python pytest` (pip fetches maturin as the build
# backend and builds the abi3 wheel from the light build: no libtorch),
# then runs the package's pytest suite (python/tests), which needs the
# shared reference data (ENGINE_SHARED_DIR, else ../shared beside the
# checkout). Prints the install time and the size of the installed
# extension; exits non-zero if anything fails.
#
#   scripts/python_tests.sh               # everything
#   scripts/python_tests.sh -k analyzer   # extra arguments go to pytest
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="$root/target/python-venv"
python="${PYTHON:-python3}"

rm -rf "$venv"
mkdir -p "$root/target"
"$python" -m venv "$venv"
start=$(date +%s)
"$venv/bin/pip" install --quiet ./python pytest
end=$(date +%s)
so="$(ls "$venv"/lib/python3*/site-packages/engine_go/_engine_go*.so)"
echo "python_tests: pip install ./python took $((end - start)) s; extension $(du -h "$so" | cut -f1) ($so)" >&2

# From the repository root, so that python/engine_go (the sources, without
# the compiled extension) is not what `import engine_go` finds.
# The suite takes seconds. A hang (seen once, 2026-12-04, in
# test_keyboard_interrupt_stops_cleanly: the interrupted 19x19 search went
# on and the test waited; not reproduced in about 30 runs since) prints every
# thread's Python stack after 120 s and fails the run at 600 s, rather than
# holding CI to its limit with nothing to show.
timeout -k 10 600 "$venv/bin/python" -m pytest -q -o faulthandler_timeout=120 python/tests "$@"
