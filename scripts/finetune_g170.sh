#!/usr/bin/env bash
# Fine-tunes g170's b6c96 (a version-8 fixup net, exported from KataGo's
# TensorFlow trainer) on KataGo's rows in ../shared/vectors/npz-more (two
# files to train on, the third held apart) and prints the held-apart
# validation losses of the starting net and after each epoch. (A batch-norm
# net would be trained as model kind b6c96-scalebias, chosen by itself.)
#
#   scripts/finetune_g170.sh [STEPS] [BATCH] [LR_SCALE] [EPOCHS] [OUT_DIR] [ENGINE TRAIN FLAGS...]
#
# e.g. scripts/finetune_g170.sh 200 32 0.2 1 /tmp/ft -no-lr-warmup
# (KataGo's warm-up would keep the learning rate near 1/20 of LR_SCALE for
# a run this short.)
# STEPS batches of BATCH rows make one epoch. Then every exported net (SWA
# weights) is evaluated on the same held-apart rows. The main heads (policy p0,
# value v, ownership own, lead) are the ones g170 was trained on; the total
# loss also counts heads g170 lacks, which start fresh and fall fast.
set -euo pipefail
steps="${1:-300}"; batch="${2:-64}"; lr_scale="${3:-0.1}"; epochs="${4:-1}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${5:-$(mktemp -d)}"
extra=("${@:6}")
shared="${ENGINE_SHARED_DIR:-$here/../shared}"
[ -d "$shared" ] || { echo "finetune_g170.sh: the reference data (KataGo's nets, vectors, tools) is not at $shared: put shared/ beside the checkout or set ENGINE_SHARED_DIR" >&2; exit 2; }
src="$shared/vectors/npz-more"
net="$shared/models/g170-b6c96-s175395328-d26788732.bin.gz"
engine="$here/target/release/engine"
export OMP_WAIT_POLICY=PASSIVE

mkdir -p "$out/shuffled/s1/train" "$out/shuffled/s1/val"
files=("$src"/*.npz)
ln -sf "${files[0]}" "$out/shuffled/s1/train/a.npz"
ln -sf "${files[1]}" "$out/shuffled/s1/train/b.npz"
ln -sf "${files[2]}" "$out/shuffled/s1/val/c.npz"
echo '{"range":[0,3000]}' > "$out/shuffled/s1/train.json"

"$engine" train -traindir "$out/train" -latestdatadir "$out/shuffled" -model-kind b6c96 \
  -initial-checkpoint "$net" -batch-size "$batch" -samples-per-epoch $((steps * batch)) \
  -lr-scale "$lr_scale" -max-epochs-this-instance "$epochs" "${extra[@]}" \
  -exportdir "$out/models" -exportprefix b6c96-g170ft 2>&1 | tee "$out/train.log" | grep -v "^train: epoch [0-9]* batch" || true
python3 - "$out/train/metrics.jsonl" <<'PY'
import json, sys
print(f"{'':14s} {'samples':>8s} {'total':>9s} {'p0':>7s} {'v':>7s} {'own':>7s} {'lead':>8s} {'scoremean':>9s}")
for line in open(sys.argv[1]):
    m = json.loads(line)
    if "val_loss" not in m:
        continue
    what = "start (g170)" if m.get("initial") else f"after epoch {m['epoch_end']}"
    print(f"{what:14s} {m['global_step_samples']:8d} {m['val_loss']:9.4f} {m['val_p0loss']:7.4f} "
          f"{m['val_vloss']:7.4f} {m['val_oloss']:7.4f} {m['val_leadloss']:8.4f} {m['val_smloss']:9.4f}")
PY
# The exported nets (SWA weights, what a user would take) on the same
# held-apart rows: a zero-epoch run only computes the starting net's losses.
echo "exported nets (SWA weights) on the held-apart rows:"
for model in "$net" "$out"/models/*/model.bin.gz; do
  rm -rf "$out/eval"
  label="$(basename "$(dirname "$model")")"
  [ "$model" = "$net" ] && label="g170 (start)"
  "$engine" train -traindir "$out/eval" -latestdatadir "$out/shuffled" -model-kind b6c96 \
    -initial-checkpoint "$model" -batch-size "$batch" -samples-per-epoch "$batch" \
    -max-epochs-this-instance 0 2>&1 | sed -n "s|^train: starting net's validation loss|  $label:|p"
done
echo "outputs in $out"
