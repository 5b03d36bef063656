#!/usr/bin/env bash
# CI: the board page of `engine serve` (web/, docs/web.md).
#
#  1. web/dist/ is what `npm ci && npm run build` makes from web/src and
#     the lock file (skipped with WEB_SKIP_DIST_CHECK=1, e.g. offline),
#     and web/test (`npm test`: rules, SGF, scoring) passes;
#  2. the light engine binary (cargo build --release --no-default-features
#     into target/light when scripts/light_build.sh made it, else target/;
#     or ENGINE_BIN if set);
#  3. a virtualenv in target/web-venv with Playwright and pytest from PyPI;
#  4. tests/web (pytest): a real `engine serve` on a free loopback port
#     (stand-in search, and the project's small net for one test), driven
#     by the system Chromium (/usr/bin/chromium; no browser download).
#     The fixtures always stop the servers they start.
#
# Installs Chromium and Node.js/npm with apt-get when they are missing
# (as root, or through sudo). WEB_SCREENSHOTS=docs also writes
# docs/web-desktop.png and docs/web-phone.png. Extra arguments go to pytest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
start=$(date +%s)

as_root() {
    if [ "$(id -u)" = 0 ]; then
        "$@"
    elif command -v sudo >/dev/null; then
        sudo "$@"
    else
        echo "web_tests: need root (or sudo) for: $*" >&2
        return 1
    fi
}
apt_updated=
apt_install() {
    if [ -z "$apt_updated" ]; then
        as_root apt-get update -qq
        apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || apt_install chromium
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"

if [ "${WEB_SKIP_DIST_CHECK:-}" != 1 ]; then
    command -v npm >/dev/null || apt_install nodejs npm
    # `npm run build` into a folder beside dist/ (same script, same
    # sources), so dist/ keeps its dates and cargo does not rebuild.
    fresh="$root/target/web-dist-fresh"
    (cd web && npm ci --no-audit --no-fund --loglevel=error && node build.mjs --out "$fresh")
    # The fresh build must be the committed dist/, and dist/ as committed.
    if ! diff -rq "$fresh" web/dist >&2 || ! git diff --quiet HEAD -- web/dist ||
        [ -n "$(git status --porcelain -- web/dist)" ]; then
        git status --short -- web/dist >&2
        echo "web_tests: web/dist/ differs from a fresh build of web/: run 'cd web && npm ci && npm run build' and commit web/dist" >&2
        exit 1
    fi
    echo "web_tests: web/dist/ matches a fresh build" >&2
fi
# The page's rules, SGF and scoring, without a browser (node's own runner).
if command -v node >/dev/null; then
    (cd web && node --test test/ >/dev/null) || { echo "web_tests: web/test failed: cd web && npm test" >&2; exit 1; }
    echo "web_tests: web/test passed" >&2
fi

if [ -z "${ENGINE_BIN:-}" ]; then
    # The light build: CI's (scripts/light_build.sh, target/light) when it
    # is there, so this is a no-op after it; else target/'s own.
    target="$root/target"
    [ -x "$root/target/light/release/engine" ] && target="$root/target/light"
    cargo build --release --no-default-features --quiet --target-dir "$target"
    export ENGINE_BIN="$target/release/engine"
fi

venv="$root/target/web-venv"
[ -x "$venv/bin/python" ] || "${PYTHON:-python3}" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check playwright==1.65.2 pytest==9.2.0
if [ -n "${WEB_SCREENSHOTS:-}" ]; then
    # Pillow makes the screenshots small (256 colours).
    "$venv/bin/pip" install --quiet --disable-pip-version-check pillow==13.0.0
    export WEB_SCREENSHOTS="$(cd "$WEB_SCREENSHOTS" && pwd)"
fi

for f in web/dist/index.html web/dist/assets/*; do
    printf 'web_tests: %-28s %7d bytes, gzip -9 %7d\n' "$f" "$(wc -c <"$f")" "$(gzip -9c "$f" | wc -c)" >&2
done

status=0
"$venv/bin/python" -m pytest -q -s -p no:cacheprovider tests/web "$@" || status=$?
echo "web_tests: $(($(date +%s) - start)) s" >&2
exit $status
