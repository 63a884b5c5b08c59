#!/bin/sh
# Measures the figures docs/image.md reports, against the image loaded into podman:
#   1. image size vs. the size of the bundled etcd binaries
#   2. start-to-serving time (podman run issued -> first successful v3 write through the published
#      port) of the image on a data dir that needs no migration, vs. etcd started directly in the
#      same image (--entrypoint /usr/local/bin/etcd-<newest>), vs. the runner without its AOT cache, vs.
#      the runner started through /usr/local/bin/etcd-migrate (the command `kubectl exec` runs)
#   3. `podman exec <serving container> etcd-migrate status`: exec issued -> its exit
# Usage: image/src/build/measure.sh [IMAGE] [RUNS]     (run as root; podman service not needed)
set -eu
image=${1:-etcd-migrate:3.7.3-0}
runs=${2:-10}
port=23799
newest=$(podman image inspect "$image" --format '{{index .Labels "dev.etcdmigrate.etcd.default"}}')
work=$(mktemp -d)
trap 'podman rm -f em-measure >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

echo "== size"
image_bytes=$(podman image inspect "$image" --format '{{.Size}}')
mkdir -p "$work/fs"
cid=$(podman create "$image")
podman export "$cid" | tar -C "$work/fs" -xf - usr/local/bin opt/java app lib lib64
podman rm "$cid" >/dev/null
bin_bytes=$(find "$work/fs/usr/local/bin" -type f -name 'etcd*-*' -printf '%s\n' | awk '{s+=$1} END {print s}')
echo "image:            $image_bytes bytes ($((image_bytes / 1000000)) MB)"
echo "etcd binaries:    $bin_bytes bytes ($((bin_bytes / 1000000)) MB)"
echo "everything else:  $((image_bytes - bin_bytes)) bytes ($(((image_bytes - bin_bytes) / 1000000)) MB), of which:"
du -sb "$work/fs/opt/java" "$work/fs/app/etcd-migrate.aot" "$work/fs/app" "$work/fs/lib" "$work/fs/lib64" | sed "s|$work/fs||"

now_ms() { date +%s%3N; }
probe() {
  curl -s -m 1 -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/v3/kv/put" \
    -d '{"key":"bWVhc3VyZQ==","value":"MQ=="}' 2>/dev/null || true
}
# one run: prints milliseconds from `podman run` to the first successful write
one() {
  start=$(now_ms)
  podman run -d --name em-measure -p "127.0.0.1:$port:2379" -v "$work/data:/var/etcd/data" -e ETCD_NAME=etcd0 \
    "$@" >/dev/null
  while [ "$(probe)" != 200 ]; do
    [ $(($(now_ms) - start)) -lt 30000 ] || { echo "timeout" >&2; podman logs em-measure >&2; exit 1; }
    sleep 0.005
  done
  end=$(now_ms)
  # inside the container: from the container's start to etcd's first log line (the exec'd etcd)
  started=$(podman inspect em-measure --format '{{.State.StartedAt}}' | sed 's/ +0000 UTC//')
  first=$(podman logs em-measure 2>&1 | grep -m1 '^{"level"' | sed 's/.*"ts":"\([^"]*\)".*/\1/')
  inner=$(( ($(date -d "$first" +%s%N) - $(date -d "$started UTC" +%s%N)) / 1000000 ))
  podman rm -f -t 10 em-measure >/dev/null
  echo "$((end - start))/$inner"
}
series() {
  label=$1
  shift
  all=""
  for i in $(seq "$runs"); do all="$all $(one "$@")"; done
  stats() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {printf "median %4d ms (min %4d, max %4d, n=%d)", a[int((NR+1)/2)], a[1], a[NR], NR}'; }
  echo "$label run->write: $(echo $all | tr ' ' '\n' | cut -d/ -f1 | tr '\n' ' ' | stats)"
  echo "$label start->etcd: $(echo $all | tr ' ' '\n' | cut -d/ -f2 | tr '\n' ' ' | stats)"
}

echo "== start to serving (no migration needed), $runs runs each, load: $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$work/data"
# data dir at the newest version, written by the image itself
one "$image" --target-version "$newest" -- --listen-client-urls http://0.0.0.0:2379 --advertise-client-urls http://127.0.0.1:2379 >/dev/null
serve="--listen-client-urls http://0.0.0.0:2379 --advertise-client-urls http://127.0.0.1:2379"
# shellcheck disable=SC2086
series "etcd directly      " --entrypoint "/usr/local/bin/etcd-$newest" "$image" $serve --data-dir /var/etcd/data
# shellcheck disable=SC2086
series "image (runner+AOT) " "$image" --target-version "$newest" -- $serve
# shellcheck disable=SC2086
series "runner without AOT " --entrypoint /opt/java/bin/java "$image" --enable-native-access=ALL-UNNAMED \
  -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData -jar /app/etcd-migrate-runner.jar \
  --target-version "$newest" -- $serve
# shellcheck disable=SC2086
series "etcd-migrate cmd   " --entrypoint /usr/local/bin/etcd-migrate "$image" --target-version "$newest" -- $serve

echo "== etcd-migrate status through exec in the serving container, $runs runs"
# shellcheck disable=SC2086
podman run -d --name em-measure -p "127.0.0.1:$port:2379" -v "$work/data:/var/etcd/data" -e ETCD_NAME=etcd0 \
  "$image" --target-version "$newest" -- $serve >/dev/null
start=$(now_ms)
while [ "$(probe)" != 200 ]; do
  [ $(($(now_ms) - start)) -lt 30000 ] || { echo "timeout" >&2; podman logs em-measure >&2; exit 1; }
  sleep 0.005
done
all=""
for i in $(seq "$runs"); do
  t0=$(now_ms)
  code=0
  podman exec em-measure etcd-migrate status --target-version "$newest" -o json >/dev/null || code=$?
  [ "$code" -le 5 ] || { echo "etcd-migrate status exited $code" >&2; exit 1; }
  all="$all $(($(now_ms) - t0))"
done
echo "status exec->exit: $(echo $all | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {printf "median %4d ms (min %4d, max %4d, n=%d)", a[int((NR+1)/2)], a[1], a[NR], NR}')"
podman rm -f -t 10 em-measure >/dev/null
