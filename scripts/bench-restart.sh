#!/usr/bin/env bash
# A restart with nothing to migrate (docs/benchmarks.md): from launching the process to etcd's
# /health answering {"health":"true"}, through the runner (no step to run, then execve etcd) and with the same etcd
# started directly, alternating on the same data dir (already at VERSION), RUNS of each; prints every figure and the
# medians. No Maven, no kubelet: the host's part of NodeCheck's restart figure.
# Usage: bash scripts/bench-restart.sh [RUNS=7] [VERSION=3.5.35]
#   BENCH_LAUNCHER=PATH   the runner to measure (default runner/target/etcd-migrate)
#   BENCH_VARIANTS=P1,P2  more runner builds in the same rotation (e.g. an older build)
#   ETCD_BIN_DIR          the bundled binaries (default ~/.cache/etcd-migrate/bin)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-7}
version=${2:-3.5.35}
bin=${ETCD_BIN_DIR:-$HOME/.cache/etcd-migrate/bin}
launchers=("${BENCH_LAUNCHER:-$PWD/runner/target/etcd-migrate}")
IFS=, read -r -a more <<<"${BENCH_VARIANTS:-}"
launchers+=("${more[@]}")
etcd=$bin/etcd-$version
[ -x "$etcd" ] || { echo "no $etcd" >&2; exit 2; }
work=$(mktemp -d /tmp/bench-restart.XXXXXX)
data=$work/data
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill "$pid"; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
client=$(free_port)
peer=$(free_port)
url=http://127.0.0.1:$client
etcd_args=(--name m1 --data-dir "$data" --listen-client-urls "$url" --advertise-client-urls "$url"
  --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer"
  --initial-cluster "m1=http://127.0.0.1:$peer")

now_ms() { date +%s%3N; }
exec {idle}<> <(:) # a descriptor nothing is written to: `read -t` on it is a sleep without a process

# Starts "$@" in the background and prints the ms until /health says true (polled every 10 ms, 60 s deadline),
# then stops it with SIGTERM and reaps it. Also prints, from that run's output: the ms from launch to etcd's first
# log line (its "ts"; through the runner: the runner's own part, up to and through execve) and etcd's election
# mode on this restart (fast: "fast-forwarding election ticks", when etcd knows the member at start; slow: it
# waits a whole randomized election timeout, 1-2 s by default - a race inside etcd 3.5 on data without a v2
# snapshot, see docs/benchmarks.md), as "total first mode".
measure() {
  local start end log=$work/run.log
  : >"$log"
  start=$(now_ms)
  "$@" >>"$log" 2>&1 &
  pid=$!
  local deadline=$((start + 60000))
  # Until etcd's first log line (before it, /health cannot answer) wait with builtins only: the poll below spawns
  # four processes per 10 ms (curl, grep, date, sleep), which on 2 cores compete with the runner's JVM start (a
  # Python harness without that poll measured the runner's part 50 ms shorter; docs/benchmarks.md, 2026-11-28).
  local lines line
  exec {lines}<"$log"
  while :; do
    if read -r -u "$lines" line; then
      # etcd's first line (JSON "ts", or any line that is not the runner's, e.g. 3.4's text log)
      [[ $line == *'"ts"'* || $line != *'[etcd-migrate]'* ]] && break
      continue
    fi
    kill -0 "$pid" 2>/dev/null || break
    read -r -t 0.005 -u "$idle" || true
  done
  exec {lines}<&-
  until curl -sf --max-time 1 "$url/health" 2>/dev/null | grep -q '"health":"true"'; do
    kill -0 "$pid" 2>/dev/null || { echo "exited before it served: see $work/out.log" >&2; tail -20 "$log" >&2; exit 1; }
    [ "$(now_ms)" -lt "$deadline" ] || { echo "not healthy within 60 s" >&2; exit 1; }
    sleep 0.01 # poll interval of a deadline-bound wait
  done
  end=$(now_ms)
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
  cat "$log" >>"$work/out.log"
  python3 - "$log" "$start" "$((end - start))" <<'PY'
import datetime, json, sys
log, start, total = sys.argv[1], int(sys.argv[2]), sys.argv[3]
first, mode = "?", "slow"
for line in open(log, errors="replace"):
    if not line.startswith("{"):
        continue
    try:
        ts = json.loads(line).get("ts")
    except ValueError:
        continue
    if ts and first == "?":
        first = int(datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000) - start
    if "fast-forwarding election ticks" in line:
        mode = "fast"
print(total, first, mode)
PY
}

# The data dir, at the version: etcd's first start makes it, version.txt says what wrote it.
measure "$etcd" "${etcd_args[@]}" >/dev/null
echo -n "$version/etcd3" >"$data/version.txt"
# each runner's first start on this data checks the binaries and keeps the answer: a restart is a later start
for l in "${launchers[@]}"; do
  measure "$l" --data-dir "$data" --target-version "$version" --bin-dir "$bin" --name m1 -- "${etcd_args[@]}" >/dev/null
done

declare -A figures firsts modes
for ((r = 1; r <= runs; r++)); do
  read -r t f m < <(measure "$etcd" "${etcd_args[@]}")
  figures[etcd]+="$t "; firsts[etcd]+="$f "; modes[etcd]+="${m:0:1}"
  for l in "${launchers[@]}"; do
    read -r t f m < <(measure "$l" --data-dir "$data" --target-version "$version" --bin-dir "$bin" --name m1 -- "${etcd_args[@]}")
    figures[$l]+="$t "; firsts[$l]+="$f "; modes[$l]+="${m:0:1}"
  done
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR+1)/2] : int((a[NR/2] + a[NR/2+1]) / 2))}'; }
echo "restart with nothing to migrate, launch -> /health true, $runs alternating runs each, etcd $version, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "(first: launch -> etcd's first log line; mode: etcd's election on that run, f = fast-forwarded, s = a whole election timeout)"
m_etcd=$(echo "${figures[etcd]}" | median)
f_etcd=$(echo "${firsts[etcd]}" | median)
echo "etcd directly: ${figures[etcd]}-> median $m_etcd ms; first: ${firsts[etcd]}-> median $f_etcd ms; modes ${modes[etcd]}"
for l in "${launchers[@]}"; do
  m=$(echo "${figures[$l]}" | median)
  f=$(echo "${firsts[$l]}" | median)
  echo "$l: ${figures[$l]}-> median $m ms (+$((m - m_etcd)) ms); first: ${firsts[$l]}-> median $f ms (+$((f - f_etcd)) ms); modes ${modes[$l]}"
done
