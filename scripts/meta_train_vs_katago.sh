#!/usr/bin/env bash
# Trains a small human-SL kind (-meta: an SGF metadata encoder) with
# `engine train` and checks that KataGo 1.17.2 reads its export as the engine
# does: both GTP engines run `kata-raw-human-nn` with the export as
# -human-model (g170 as the main net) under two profiles, and the answers are
# compared word by word.
#
#   KATAGO=<katago binary> KATAGO_CONFIG=<its gtp_example.cfg> \
#       scripts/meta_train_vs_katago.sh [MODEL_KIND]   # default b2c16-silu-meta
#
# The rows are shared/vectors/npz-more/45C4BC88EB096EBB.npz (1,000 rows) with
# a metadataInputNC member added (seeded 0/1 values; only python3's standard
# library is used). ENGINE (default target/release/engine) and SHARED
# (default $ENGINE_SHARED_DIR, else ../shared) may be set. Exit status 1 if an answer differs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
katago="${KATAGO:?set KATAGO to the katago binary}"
katago_config="${KATAGO_CONFIG:?set KATAGO_CONFIG to the gtp_example.cfg of KataGo}"
engine="${ENGINE:-$root/target/release/engine}"
shared="${SHARED:-${ENGINE_SHARED_DIR:-$root/../shared}}"
[ -d "$shared" ] || { echo "no shared data at $shared (set SHARED or ENGINE_SHARED_DIR)" >&2; exit 2; }
kind="${1:-b2c16-silu-meta}"
g170="$shared/models/g170-b6c96-s175395328-d26788732.bin.gz"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/selfplay"

python3 - "$shared/vectors/npz-more/45C4BC88EB096EBB.npz" "$work/selfplay/meta.npz" <<'EOF'
import random, struct, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
    rows = None
    for name in zin.namelist():
        data = zin.read(name)
        zout.writestr(name, data)
        if name.startswith("globalInputNC"):
            header = data[10:10 + struct.unpack("<H", data[8:10])[0]].decode()
            rows = int(header.split("'shape':(")[1].split(",")[0])
    rng = random.Random(3)
    body = struct.pack(f"<{rows * 192}f", *[float(rng.random() < 0.2) for _ in range(rows * 192)])
    header = "{'descr':'<f4','fortran_order':False,'shape':(%d,192)}" % rows
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    zout.writestr("metadataInputNC.npy",
                  b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + body)
EOF

"$engine" shuffle "$work/selfplay" -out-dir "$work/shuffled/s1/train" -out-tmp-dir "$work/tmp" \
    -min-rows 100 -keep-target-rows 100000 -include-meta > "$work/shuffle.log"
OMP_NUM_THREADS=1 "$engine" train -traindir "$work/train" -latestdatadir "$work/shuffled" \
    -model-kind "$kind" -batch-size 16 -samples-per-epoch 256 -max-epochs-this-instance 1 \
    -no-lr-warmup -exportdir "$work/models" -exportprefix meta 2> "$work/train.log"
net="$(ls "$work"/models/*/model.bin.gz)"

printf '%s\n' "boardsize 19" "play B Q16" "play W D4" \
    "kata-set-param humanSLProfile rank_5k" "kata-raw-human-nn 0" \
    "kata-set-param humanSLProfile preaz_9d" "kata-raw-human-nn 0" quit > "$work/commands.txt"
"$katago" gtp -model "$g170" -human-model "$net" -config "$katago_config" \
    < "$work/commands.txt" > "$work/katago.txt" 2> "$work/katago.err"
"$engine" gtp -model "$g170" -human-model "$net" -config "$root/configs/gtp.toml" \
    < "$work/commands.txt" > "$work/engine.txt" 2> "$work/engine.err"

python3 - "$work/katago.txt" "$work/engine.txt" <<'EOF'
import sys
katago, ours = (open(f).read() for f in sys.argv[1:3])
answers = [a for a in katago.split("\n\n") if "symmetry" in a]
assert len(answers) == 2 and answers[0] != answers[1], "the profiles gave one answer"
worst, differ = 0.0, 0
for a, b in zip(katago.split(), ours.split()):
    try:
        worst = max(worst, abs(float(a) - float(b)))
    except ValueError:
        differ += a != b
differ += len(katago.split()) != len(ours.split())
print(f"{len(katago.split())} words: largest numeric difference {worst:g}, other differences {differ}")
sys.exit(1 if differ or worst > 2e-6 else 0)
EOF
