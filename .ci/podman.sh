#!/bin/sh
# Machine setup for the image build and the image tests: podman + runc from Debian's packages,
# the containers.conf these machines need, and a Docker-compatible API socket for Testcontainers
# and the docker CLI. Idempotent; see /work/shared/container-engine.md for why each setting exists.
#
#   .ci/podman.sh install   install podman/runc and write /etc/containers/containers.conf
#   .ci/podman.sh start     install (if needed), then start `podman system service` in the background
#                           and print `export DOCKER_HOST=...` (the only line on stdout)
#   .ci/podman.sh stop      stop the service started by `start` (by its PID)
#   .ci/podman.sh env       print `export DOCKER_HOST=...`
#
# PODMAN_SOCKET_DIR (default /run/etcd-migrate-podman) holds podman.sock, podman.pid and podman.log.
set -eu

dir=${PODMAN_SOCKET_DIR:-/run/etcd-migrate-podman}
sock=$dir/podman.sock
pidfile=$dir/podman.pid
logfile=$dir/podman.log

log() { echo "podman.sh: $*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install() {
  if ! command -v podman >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1; then
    log "installing podman and runc"
    as_root apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq podman runc >&2
  fi
  # crun (podman's default) fails on hybrid cgroups; rootful containers may not raise RLIMIT_NOFILE.
  conf=$(cat <<'EOF'
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "runc"
EOF
)
  if [ "$(cat /etc/containers/containers.conf 2>/dev/null || true)" != "$conf" ]; then
    log "writing /etc/containers/containers.conf"
    as_root mkdir -p /etc/containers
    printf '%s\n' "$conf" | as_root tee /etc/containers/containers.conf >/dev/null
  fi
}

running() {
  [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

print_env() {
  echo "export DOCKER_HOST=unix://$sock"
}

start() {
  install
  mkdir -p "$dir"
  if running; then
    log "already running (pid $(cat "$pidfile"))"
  else
    rm -f "$sock"
    # setsid + nohup: the service outlives this script and ignores the caller's terminal.
    setsid nohup podman system service --time=0 "unix://$sock" >"$logfile" 2>&1 </dev/null &
    echo $! >"$pidfile"
    i=0
    while [ ! -S "$sock" ]; do
      i=$((i + 1))
      if [ "$i" -gt 100 ] || ! running; then
        log "the podman service did not come up; see $logfile"
        cat "$logfile" >&2 || true
        exit 1
      fi
      sleep 0.1
    done
    log "started podman system service (pid $(cat "$pidfile")), socket $sock"
  fi
  print_env
}

stop() {
  if running; then
    pid=$(cat "$pidfile")
    kill -TERM "$pid"
    i=0
    while kill -0 "$pid" 2>/dev/null; do
      i=$((i + 1))
      if [ "$i" -gt 100 ]; then kill -KILL "$pid" 2>/dev/null || true; break; fi
      sleep 0.1
    done
    log "stopped podman system service (pid $pid)"
  else
    log "not running"
  fi
  rm -f "$pidfile" "$sock"
}

case "${1:-start}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  env) print_env ;;
  *) echo "usage: $0 install|start|stop|env" >&2; exit 2 ;;
esac
