#!/usr/bin/env bash
# End to end: `engine train` on ../shared/vectors/npz-more (two files to train
# on, the third held apart for validation), killed with SIGKILL part-way,
# restarted, then exported by hand. Prints the validation loss per epoch.
#
#   scripts/train_e2e.sh [KIND] [EPOCHS] [KILL_AFTER_SECONDS] [OUT_DIR]
set -euo pipefail
kind="${1:-b2c16}"; epochs="${2:-8}"; kill_after="${3:-50}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${4:-$(mktemp -d)}"
shared="${ENGINE_SHARED_DIR:-$here/../shared}"
[ -d "$shared" ] || { echo "train_e2e.sh: the reference data (KataGo's nets, vectors, tools) is not at $shared: put shared/ beside the checkout or set ENGINE_SHARED_DIR" >&2; exit 2; }
src="$shared/vectors/npz-more"
engine="$here/target/release/engine"
export OMP_WAIT_POLICY=PASSIVE

mkdir -p "$out/shuffled/s1/train" "$out/shuffled/s1/val"
files=("$src"/*.npz)
ln -sf "${files[0]}" "$out/shuffled/s1/train/a.npz"
ln -sf "${files[1]}" "$out/shuffled/s1/train/b.npz"
ln -sf "${files[2]}" "$out/shuffled/s1/val/c.npz"
echo '{"range":[0,3000]}' > "$out/shuffled/s1/train.json"

args=(train -traindir "$out/train" -latestdatadir "$out/shuffled" -model-kind "$kind"
  -batch-size 64 -samples-per-epoch 4032 -no-lr-warmup -checkpoint-every-samples 1920
  -exportdir "$out/models" -exportprefix "$kind")
"$engine" "${args[@]}" -max-epochs-this-instance "$epochs" 2>"$out/run1.log" &
pid=$!
sleep "$kill_after"
kill -9 "$pid" || true
wait "$pid" 2>/dev/null || true
echo "killed after ${kill_after}s; files in train dir:"; ls "$out/train"
done_epochs=$(grep -c epoch_end "$out/train/metrics.jsonl" || true)
"$engine" "${args[@]}" -max-epochs-this-instance $((epochs - done_epochs)) 2>"$out/run2.log"
grep -m1 resumed "$out/run2.log" || { echo "did not resume"; exit 1; }
"$engine" export -checkpoint "$out/train/checkpoint.safetensors" -export-dir "$out/export" -model-name "$kind-final" -use-swa
python3 - "$out/train/metrics.jsonl" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    if "epoch_end" in m:
        print(f"epoch {m['epoch_end']:2d}  samples {m['global_step_samples']:6d}  val loss/sample {m.get('val_loss', float('nan')):.4f}  epoch samples/s {m['epoch_samples_per_sec']:.1f}")
EOF
echo "outputs in $out (loss.svg, metrics.jsonl, models/, export/)"
