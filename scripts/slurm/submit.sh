#!/usr/bin/env bash
# Submits a training run to Slurm: self-play workers (an array job, one
# task per GPU) and one learner job, all on one run store.
#
#   scripts/slurm/submit.sh STORE [CONFIG]
#
# STORE: a shared folder (NFS, Lustre; absolute path) or s3://bucket/prefix
# (the jobs get this shell's AWS_* environment). CONFIG: the learner's config
# (default configs/learn.toml beside this script's checkout). Run it from any
# folder. The engine binary is $ENGINE, else an `engine` next to this script,
# else the checkout's target/release/engine, else `engine` on PATH.
#
# Environment:
#   ENGINE_WORKERS           self-play tasks (default 4)
#   ENGINE_GPUS_PER_WORKER   GPUs per task (default 1 if the cluster has GPUs, else 0)
#   ENGINE_WORKER_CPUS       CPUs per task (default 4 with GPUs, else 1)
#   ENGINE_LEARNER_CPUS      CPUs of the learner (default 4)
#   ENGINE_LEARNER_GPUS      GPUs of the learner (default 0; set trainCuda = true in the config too)
#   ENGINE_LEARNER_TIME      the learner's time limit per run of the job (default: the partition's);
#                            it checkpoints 2 minutes before and requeues itself
#   ENGINE_SELFPLAY_OVERRIDES  extra self-play keys for the workers, e.g. numGameThreads=256
#   ENGINE_LOG_DIR           where the jobs' logs go (default ./slurm-logs)
#   ENGINE_SBATCH_ARGS       more sbatch flags for both jobs (e.g. --partition=gpu --account=x)
# Prints the two job ids (workers, learner). Stop the run with scancel on both;
# `engine learn -store STORE status` shows its progress.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
store="${1:?usage: submit.sh STORE [CONFIG]}"
config="${2:-$repo/configs/learn.toml}"
[ -f "$config" ] || { echo "submit.sh: no config at $config" >&2; exit 2; }
config="$(cd "$(dirname "$config")" && pwd)/$(basename "$config")"
case "$store" in
  s3://*|file://*) ;;
  /*) ;;
  *) store="$(pwd)/$store" ;;
esac

engine="${ENGINE:-}"
if [ -z "$engine" ]; then
  for c in "$here/engine" "$repo/target/release/engine" "$(command -v engine || true)"; do
    if [ -n "$c" ] && [ -x "$c" ]; then engine="$c"; break; fi
  done
fi
[ -n "$engine" ] && [ -x "$engine" ] || { echo "submit.sh: no engine binary (set ENGINE or build: ./setup.sh cargo build --release)" >&2; exit 2; }
engine="$(cd "$(dirname "$engine")" && pwd)/$(basename "$engine")"

workers="${ENGINE_WORKERS:-4}"
if [ -z "${ENGINE_GPUS_PER_WORKER:-}" ]; then
  if sinfo -h -o %G 2>/dev/null | grep -q gpu; then ENGINE_GPUS_PER_WORKER=1; else ENGINE_GPUS_PER_WORKER=0; fi
fi
gpus="$ENGINE_GPUS_PER_WORKER"
if [ "$gpus" -gt 0 ]; then worker_cpus="${ENGINE_WORKER_CPUS:-4}"; else worker_cpus="${ENGINE_WORKER_CPUS:-1}"; fi
logs="${ENGINE_LOG_DIR:-$(pwd)/slurm-logs}"
mkdir -p "$logs"
# shellcheck disable=SC2206
extra=(${ENGINE_SBATCH_ARGS:-})

export ENGINE="$engine" ENGINE_STORE="$store" ENGINE_LEARN_CONFIG="$config"
worker_gres=()
[ "$gpus" -gt 0 ] && worker_gres=(--gres="gpu:$gpus")
learner_gres=()
[ "${ENGINE_LEARNER_GPUS:-0}" -gt 0 ] && learner_gres=(--gres="gpu:$ENGINE_LEARNER_GPUS")
learner_time=()
[ -n "${ENGINE_LEARNER_TIME:-}" ] && learner_time=(--time="$ENGINE_LEARNER_TIME")

workers_job=$(sbatch --parsable --export=ALL "${extra[@]}" --array="0-$((workers - 1))" \
  --cpus-per-task="$worker_cpus" "${worker_gres[@]}" \
  --output="$logs/%x-%A_%a.out" --open-mode=append "$here/selfplay.sbatch")
learner_job=$(sbatch --parsable --export=ALL "${extra[@]}" \
  --cpus-per-task="${ENGINE_LEARNER_CPUS:-4}" "${learner_gres[@]}" "${learner_time[@]}" \
  --output="$logs/%x-%j.out" --open-mode=append "$here/learn.sbatch")
echo "submit.sh: $workers self-play workers: job $workers_job; learner: job $learner_job; logs in $logs" >&2
echo "$workers_job $learner_job"
