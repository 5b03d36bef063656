#!/usr/bin/env bash
# Runs a command with libtorch available to the build, installing it first if
# needed:
#
#   ./setup.sh cargo run --release -- gtp -model NET.bin.gz
#   ./setup.sh cargo test --release
#
# If LIBTORCH is set, that libtorch is used as it is (tch's own convention).
# Otherwise PyTorch 2.11.0 (the version tch 0.24 is built against) is
# installed from PyPI into the project-local, git-ignored .venv the first time
# and reused afterwards; the build then takes libtorch from it
# (LIBTORCH_USE_PYTORCH=1). build.rs bakes the library path into the binary,
# so target/release/engine later runs without any environment.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
torch_version="2.11.0"

if [ -z "${LIBTORCH:-}" ]; then
  venv="$here/.venv"
  stamp="$venv/.torch-$torch_version"
  if [ ! -f "$stamp" ]; then
    echo "setup.sh: installing torch==$torch_version into $venv (once; about 5 GB)" >&2
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "torch==$torch_version"
    "$venv/bin/python" -c "import torch, sys; sys.exit(0 if torch.__version__.startswith('$torch_version') else 1)"
    touch "$stamp"
  fi
  export VIRTUAL_ENV="$venv"
  export PATH="$venv/bin:$PATH"
  export LIBTORCH_USE_PYTORCH=1
fi

if [ "$#" -eq 0 ]; then
  echo "setup.sh: libtorch is ready; pass a command to run, e.g. ./setup.sh cargo test --release" >&2
  exit 0
fi
exec "$@"
