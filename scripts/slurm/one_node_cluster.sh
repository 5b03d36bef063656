#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for testing scripts/slurm/: the
# controller and the compute node run here, from Debian's slurm-wlm and
# munge, with no systemd and no accounting database.
#
#   scripts/slurm/one_node_cluster.sh start     # installs the packages if missing (root, apt-get)
#   scripts/slurm/one_node_cluster.sh stop      # cancels every job, stops the daemons
#   scripts/slurm/one_node_cluster.sh status    # exit 0 when the node is up
#
# The partition `debug` lets jobs share cores (OverSubscribe=FORCE:4): on a
# small box a self-play array would otherwise starve the learner job. The
# node line comes from `slurmd -C`, the node name is `hostname -s`.
# Process tracking is proctrack/linuxproc with task/none (no cgroups): CPU
# and memory limits are not enforced. Needs root (daemons, /etc/slurm).
set -euo pipefail

conf=/etc/slurm/slurm.conf
pids=(/run/slurmd.pid /run/slurmctld.pid /run/munge/munged.pid)

die() { echo "one_node_cluster.sh: $*" >&2; exit 1; }

# Whether the pid file $1 names a live process called $2.
alive() {
  local p
  [ -f "$1" ] || return 1
  p=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$p" ] && [ -r "/proc/$p/comm" ] && [ "$(cat "/proc/$p/comm")" = "$2" ]
}

node_up() {
  command -v sinfo >/dev/null 2>&1 || return 1
  sinfo -h -o %t 2>/dev/null | grep -Eqx 'idle|mix|alloc'
}

install_packages() {
  local missing=0 c
  for c in slurmctld slurmd sbatch squeue scontrol munged munge; do
    [ -x "/usr/sbin/$c" ] || command -v "$c" >/dev/null 2>&1 || missing=1
  done
  [ "$missing" = 0 ] && return 0
  [ "$(id -u)" = 0 ] || die "slurm-wlm and munge are not installed, and installing them needs root"
  echo "one_node_cluster.sh: installing slurm-wlm and munge (apt-get, once)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq slurm-wlm munge >/dev/null
}

write_config() {
  local host node
  host=$(hostname -s)
  node=$(slurmd -C | head -n 1)
  mkdir -p /etc/slurm /run/munge /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
  chown munge:munge /run/munge
  chown slurm:slurm /var/spool/slurmctld /var/log/slurm
  cat > "$conf" <<EOF
# Written by scripts/slurm/one_node_cluster.sh: a one-node test cluster.
ClusterName=onenode
SlurmctldHost=$host
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
MinJobAge=600
$node State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
}

start() {
  [ "$(id -u)" = 0 ] || die "start needs root (it runs the Slurm and munge daemons)"
  install_packages
  if node_up && alive /run/slurmctld.pid slurmctld && alive /run/slurmd.pid slurmd; then
    echo "one_node_cluster.sh: already running" >&2
    return 0
  fi
  write_config
  [ -f /etc/munge/munge.key ] || die "/etc/munge/munge.key is missing (reinstall munge)"
  alive /run/munge/munged.pid munged || runuser -u munge -- /usr/sbin/munged
  munge -n | unmunge >/dev/null || die "munge does not work"
  alive /run/slurmctld.pid slurmctld || /usr/sbin/slurmctld -c
  alive /run/slurmd.pid slurmd || /usr/sbin/slurmd
  local i
  for i in $(seq 1 150); do
    if node_up; then
      sinfo >&2
      return 0
    fi
    # A node left DOWN by an earlier run comes back with a resume.
    if [ "$i" = 25 ]; then scontrol update nodename="$(hostname -s)" state=resume 2>/dev/null || true; fi
    sleep 0.2
  done
  tail -n 20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
  die "the node did not come up in 30 s"
}

stop() {
  if command -v scancel >/dev/null 2>&1 && alive /run/slurmctld.pid slurmctld; then
    scancel --partition=debug 2>/dev/null || true
    for _ in $(seq 1 50); do
      [ -z "$(squeue -h 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  local f comm p
  for f in "${pids[@]}"; do
    comm=$(basename "$f" .pid)
    if alive "$f" "$comm"; then
      p=$(cat "$f")
      kill "$p" 2>/dev/null || true
      for _ in $(seq 1 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$p" 2>/dev/null || true
    fi
  done
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) node_up ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
