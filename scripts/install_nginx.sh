#!/usr/bin/env bash
# Installs Debian's nginx for tests/serve_nginx.rs, if it is not there yet
# (on PATH or /usr/sbin/nginx). The test starts its own nginx as a
# non-root process with its own prefix and config; the package's system
# service is not needed (in containers whose policy-rc.d forbids starting
# services it is not started; elsewhere stop it if you do not want it).
# Uses sudo only when not root. .ci/run calls this before the tests.
set -euo pipefail
if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "install_nginx.sh: installing nginx (apt-get) for tests/serve_nginx.rs" >&2
$sudo apt-get update -qq
# nginx-light is bookworm's smallest build with the proxy and upstream
# modules; later Debian releases dropped it, and their plain `nginx` is the
# small core build.
if ! $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light; then
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx
fi
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null
