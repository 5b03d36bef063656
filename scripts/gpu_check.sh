#!/usr/bin/env bash
# GPU readiness check of `engine` in one command: CUDA parity, search and
# network speed, analysis, self-play and training throughput, optionally
# against KataGo's CUDA build; writes $OUT/gpu_report.md and .json.
# `scripts/gpu_check.sh --help` says everything; the work is done by
# scripts/gpu_check.py (Python 3, standard library only).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

usage() {
  cat <<'EOF'
scripts/gpu_check.sh [--profile budget|full] [--plan] [--dry-run]
                     [--pack DIR] [--engine PATH] [--only STAGE,...]
                     [--work DIR]

Checks the engine on a GPU: CUDA parity against KataGo's outputs, search
and network speed, self-play, training and analysis throughput. Each
stage has a time cap; a stage that fails or runs out of time is recorded
in the report and the next one starts. The report, $OUT/gpu_report.md
(tables) and $OUT/gpu_report.json (the same, for scripts), is written at
the start with every stage "not reached" and rewritten after each stage,
so a run cut off at its limit still leaves every finished stage. OUT
defaults to ./gpu_check_out; nothing else is written there (scratch files
go to --work, default a temporary folder removed at the end). Exit code 0
when every stage passed, 1 when one failed or was not reached (the report
says which), 2 for bad usage.

The standing rule: a session lent a device (`status` says
can_start_another) packs with scripts/gpu_pack.sh on the build machine and
makes ONE device call with the budget profile, as gpu_pack.sh prints it:
the report comes back in OUT. On the device the check reads everything
from the packed folder (--pack DIR): ../shared does not travel.

Profiles (--plan prints STAGE CAP_SECONDS lines and the total):
  budget (default)  caps summing to 450 s, the run stops itself at 480 s:
                    one call of a 15-minute device lease
    link     (15)  the binary links libtorch_cuda (ldd), no library is
                   missing, stripped size within 64 MiB; `engine version`
                   and nvidia-smi see the GPU.
    parity   (90)  g170 b6c96 and the transformer net
                   b7c96h6kv3qk32v16tflrs-fson-bnh through `engine
                   analysis` on KataGo's reference positions
                   (vectors/nn/nn.jsonl, 1 visit, 8 symmetries) on the GPU in
                   fp32, fp16 and bf16, against this binary's CPU fp32 (and,
                   for g170, against KataGo 1.17.2's outputs). Tolerances:
                   fp32 the vectors README's (policy 1e-4, ownership 1e-3,
                   winrate 1e-4, scores 1e-3 points, the CPU comparison
                   scaled by max(1,|value|) for scores); fp16 KataGo's
                   testgpuerror limits for half precision (winrate 5%,
                   scores 3 points, top policy 6%, policy KL 0.004,
                   ownership 0.20); bf16 (3 fewer mantissa bits) twice
                   those. Any NaN or inf fails.
    search   (120) `engine benchmark` 19x19, fp16, g170 b6c96 and a random
                   b18c384nbt (exported on the spot), 64 and 128 search
                   threads, 800 visits: visits/s, NN evals/s, average batch,
                   GPU utilisation (nvidia-smi, sampled every 0.5 s).
    nn       (60)  `engine benchmark -nn` at batch 256, both nets, fp16 and
                   bf16: evals/s, TFLOP/s and the share of the GPU's dense
                   tensor-core peak (the table of known GPUs, H200 included).
    selfplay (75)  60 s of `engine selfplay`, b6c96, 19x19, 256 game
                   threads, 100 visits (cheap searches 25): the network's
                   rows/s and average batch, games and rows/hour of the
                   games that finished.
    train    (50)  `engine train -cuda` of b6c96 in bf16 for 30 s on a
                   shuffled window of vectors/npz-more: samples/s, the loss
                   finite and falling.
    analysis (40)  `engine analysis` with 64 queries in flight (19x19
                   positions, 200 visits each, b6c96 fp16) for 25 s:
                   positions/s.
  full              the longer list for a longer lease (caps summing to
                    1470 s, the run stops at 1500 s; more than one device
                    call allows, so split it with --only): parity of every
                    net of shared/models plus a random b18c384nbt; search at
                    16, 32, 64 and 128 threads; nn at batch 64, 256, 1024 in
                    fp16; analysis 60 s; self-play 3 minutes at 128 game
                    threads and 200 visits; training of b6c96, b18c384nbt and
                    the transformer b7c96h6kv3qk32v16tflrs in fp32, bf16 and
                    fp16; and `katago`: with KATAGO_CUDA=path (a KataGo
                    1.17.2 CUDA build) its `benchmark` and ours on g170,
                    19x19, alternated twice, with the ratios per thread count.

--dry-run runs the chosen profile on this machine's CPU with tiny sizes (a
few threads and positions, batches of 1-4, seconds per stage, 9x9
self-play, b1c6nbt/b2c16 for training, a random b2c16 for the big net) and
checks that the report is complete (every stage has a row, every number is
finite), that the binary links libtorch_cuda and that its stripped size is
within 64 MiB: `scripts/gpu_pack.sh --dir D && scripts/gpu_check.sh
--dry-run --pack D` tests the packed folder too (tests/gpu_check_dry_run.rs
does exactly that).

Environment:
  OUT                 output folder (default ./gpu_check_out)
  ENGINE              the binary (default ./engine if present, else
                      target/release/engine); or --engine PATH
  ENGINE_SHARED_DIR   the shared data (default ../shared)
  TORCH_VENV          PyTorch venv whose torch/lib is added to
                      LD_LIBRARY_PATH when the binary's own libtorch path
                      is missing (default /opt/torch/.venv)
  KATAGO_CUDA         a KataGo 1.17.2 CUDA binary (stage katago)
  KATAGO_CFG          its GTP config (default $KATAGO_SRC/cpp/configs/
                      gtp_example.cfg)
  PYTHON              Python 3 to run scripts/gpu_check.py (default
                      python3, else $TORCH_VENV/bin/python)

Copying the binary to a GPU machine
  scripts/gpu_pack.sh does all of this for a device call (see its --help).
  The GPU machine has CUDA, CMake, PyTorch 2.11.0+cu130 in /opt/torch/.venv
  and 16 cores, but no cargo and no internet. By hand, on the build machine:
    ./setup.sh cargo build --release     # links PyPI's torch 2.11.0 (CUDA 13.0)
    ldd target/release/engine | grep libtorch_cuda   # must be listed: a
                                                     # CPU-only libtorch cannot run CUDA
    strip -o engine target/release/engine            # ~15 MB (unstripped: ~140 MB)
    ls -l engine                                     # must be within 64 MiB
  Copy `engine` (and the project's configs/ and scripts/, and ../shared)
  to the GPU machine; there:
    export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.*/site-packages/torch/lib
    ./engine version            # "libtorch: cuda available = true"
  (expand the glob to the real python3.X folder). libtorch's CUDA libraries
  (cuDNN, cuBLAS, the CUDA runtime) are found by libtorch itself in the
  venv's site-packages/nvidia/*/lib folders; if `ldd ./engine` still shows
  one "not found", add that folder to LD_LIBRARY_PATH too. This script sets
  LD_LIBRARY_PATH from TORCH_VENV by itself when the binary needs it.

Building KataGo's CUDA backend on the GPU machine (for KATAGO_CUDA)
  From a copied KataGo source tree (v1.17.2), with nvcc from CUDA and the
  cuDNN headers and library from the venv's pip package nvidia-cudnn:
    CUDNN=$(echo /opt/torch/.venv/lib/python3.*/site-packages/nvidia/cudnn)
    cd KataGo/cpp && mkdir -p build && cd build
    cmake .. -DUSE_BACKEND=CUDA -DCMAKE_BUILD_TYPE=Release \
      -DCUDNN_INCLUDE_DIR=$CUDNN/include \
      -DCUDNN_LIBRARY=$(ls $CUDNN/lib/libcudnn.so* | head -1)
    make -j16      # KataGo compiles for every CUDA architecture: minutes
    export LD_LIBRARY_PATH=$CUDNN/lib:$LD_LIBRARY_PATH
    KATAGO_CUDA=$PWD/katago KATAGO_SRC=$PWD/../.. scripts/gpu_check.sh
  (KataGo needs zlib's headers too; libzip is optional. If CMake does not
  find cuDNN, check that the include folder holds cudnn.h; cuDNN 9 from pip
  names its library libcudnn.so.9, which the -DCUDNN_LIBRARY above picks.)
EOF
}

args=()
for a in "$@"; do
  case "$a" in
    -h|--help) usage; exit 0 ;;
    *) args+=("$a") ;;
  esac
done

torch_venv="${TORCH_VENV:-/opt/torch/.venv}"
py="${PYTHON:-}"
if [ -z "$py" ]; then
  if command -v python3 >/dev/null 2>&1; then py=python3
  elif [ -x "$torch_venv/bin/python" ]; then py="$torch_venv/bin/python"
  else echo "gpu_check.sh: no Python 3 found (set PYTHON)" >&2; exit 2
  fi
fi
export TORCH_VENV="$torch_venv"
exec "$py" "$here/scripts/gpu_check.py" --root "$here" ${args[@]+"${args[@]}"}
