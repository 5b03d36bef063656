#!/usr/bin/env bash
# Packs everything scripts/gpu_check.sh needs on a GPU machine into one
# git-ignored folder of the repository (default gpu_pack/): the stripped
# binary, the nets and reference files of the chosen profile (from ../shared
# or ENGINE_SHARED_DIR, which does not travel to a device), configs/ and the
# check's scripts. Checks the size and prints the exact device `run` call.
# `scripts/gpu_pack.sh --help` says more.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

usage() {
  cat <<'EOF'
scripts/gpu_pack.sh [--profile budget|full] [--dir DIR] [--engine PATH]

Makes DIR (default gpu_pack/ in the repository root, git-ignored) hold:
  engine.xz                   the binary, stripped and xz-compressed (ENGINE
                              or --engine; default target/release/engine,
                              the libtorch build: `./setup.sh cargo build
                              --release`); gpu_check.sh unpacks it into its
                              scratch folder. Compressed because the
                              repository's tracked files (~41 MiB, most of
                              it the fuzz corpus) travel with every call
                              and the whole call may hold 64 MiB.
  scripts/gpu_check.{sh,py}   the check
  configs/                    the project's configs
  shared/models/              budget: g170 b6c96 and the transformer test
                              net b7c96h6kv3qk32v16tflrs-fson-bnh;
                              full: every net of ../shared/models
  shared/vectors/nn/nn.jsonl  KataGo's reference positions and answers
  shared/vectors/npz-more/    KataGo training rows (the train stage)
  PACK.txt                    what was packed, from which commit
then checks that DIR is at most 60 MiB and that DIR plus the repository's
tracked files (what travels with a device call) stay within 64 MiB, and
prints the device call: carry, command and timeout_s. On the device the
check reads everything from DIR (`gpu_check.sh --pack DIR`).

Exit code 0 when packed, 1 when something is missing or too large, 2 for
bad usage.
EOF
}

profile=budget
dir="$here/gpu_pack"
engine="${ENGINE:-$here/target/release/engine}"
shared="${ENGINE_SHARED_DIR:-$here/../shared}"
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --profile) profile="${2:?--profile needs a value}"; shift 2 ;;
    --dir) dir="${2:?--dir needs a value}"; shift 2 ;;
    --engine) engine="${2:?--engine needs a value}"; shift 2 ;;
    *) echo "gpu_pack.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$profile" in
  budget) nets=(g170-b6c96-s175395328-d26788732 b7c96h6kv3qk32v16tflrs-fson-bnh); limit=480 ;;
  full) nets=(); limit=1500 ;;
  *) echo "gpu_pack.sh: --profile is budget or full, not $profile" >&2; exit 2 ;;
esac
fail() { echo "gpu_pack.sh: $*" >&2; exit 1; }
[ -f "$engine" ] || fail "no binary at $engine (build it: ./setup.sh cargo build --release; or --engine PATH)"
[ -d "$shared/models" ] || fail "no shared data at $shared (set ENGINE_SHARED_DIR)"
command -v strip >/dev/null || fail "strip (binutils) is needed"
command -v python3 >/dev/null || fail "python3 is needed"

case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
rm -rf "$dir"
mkdir -p "$dir/scripts" "$dir/shared/models" "$dir/shared/vectors/nn" "$dir/shared/vectors/npz-more"
strip -o "$dir/engine.stripped" "$engine"
# Python's lzma (preset 1: ~3x smaller in a few seconds), not the xz tool,
# which a machine need not have.
python3 -c 'import lzma, sys; open(sys.argv[2], "wb").write(lzma.compress(open(sys.argv[1], "rb").read(), preset=1))' \
  "$dir/engine.stripped" "$dir/engine.xz"
rm "$dir/engine.stripped"
cp "$here/scripts/gpu_check.sh" "$here/scripts/gpu_check.py" "$dir/scripts/"
cp -r "$here/configs" "$dir/configs"
if [ ${#nets[@]} -eq 0 ]; then
  cp "$shared"/models/*.bin.gz "$dir/shared/models/"
else
  for n in "${nets[@]}"; do
    [ -f "$shared/models/$n.bin.gz" ] || fail "missing $shared/models/$n.bin.gz"
    cp "$shared/models/$n.bin.gz" "$dir/shared/models/"
  done
fi
cp "$shared/vectors/nn/nn.jsonl" "$dir/shared/vectors/nn/"
cp "$shared"/vectors/npz-more/*.npz "$dir/shared/vectors/npz-more/"

commit="$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$here" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  commit="$commit (with uncommitted changes)"
fi
{
  echo "gpu_pack: profile $profile, commit $commit, packed $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "binary: stripped from $engine, xz-compressed as engine.xz"
  (cd "$dir" && find . -type f ! -name PACK.txt -printf '%s %p\n' | sort -k2)
} >"$dir/PACK.txt"

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
pack_bytes=$(du -sb "$dir" | cut -f1)
tracked_bytes=$(cd "$here" && git ls-files -z | xargs -0 stat -c %s 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
max_pack=$((60 << 20))
max_call=$((64 << 20))
echo "gpu_pack: $dir: $(mib "$pack_bytes") MiB (at most 60); with the repository's tracked files ($(mib "$tracked_bytes") MiB): $(mib $((pack_bytes + tracked_bytes))) MiB (at most 64)" >&2
[ "$pack_bytes" -le "$max_pack" ] || fail "the pack is over 60 MiB"
[ $((pack_bytes + tracked_bytes)) -le "$max_call" ] || fail "the pack and the repository together are over 64 MiB"

# The device call: the folder must be inside the repository (and ignored,
# so it travels only as `carry`).
case "$dir" in
  "$here"/*) rel="${dir#"$here"/}" ;;
  *) rel="" ;;
esac
profile_flag=""
[ "$profile" = budget ] || profile_flag=" --profile $profile"
timeout_s=$((limit + 60))
[ "$timeout_s" -le 600 ] || timeout_s=600
if [ -n "$rel" ]; then
  if ! git -C "$here" check-ignore -q "$rel/engine.xz"; then
    echo "gpu_pack.sh: warning: $rel is not git-ignored: it would travel with the working tree as well as with carry" >&2
  fi
  cat <<EOF
The device call (one run; the report comes back as gpu_report.md and .json):
  carry:     ["$rel"]
  timeout_s: $timeout_s
  command:   export LD_LIBRARY_PATH=\$(echo /opt/torch/.venv/lib/python3*/site-packages/torch/lib); PYTHONUNBUFFERED=1 $rel/scripts/gpu_check.sh --pack $rel$profile_flag 2>&1 | tee \$OUT/gpu_check.log
EOF
else
  echo "gpu_pack: $dir is outside the repository: pack into it (the default, gpu_pack/) to carry it to a device"
fi
if [ "$profile" = full ]; then
  echo "gpu_pack: the full profile runs up to $limit s, longer than one device call (600 s): split it with --only STAGE,..." >&2
fi
