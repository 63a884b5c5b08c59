#!/usr/bin/env bash
# The checks that the image and every bundled release run on linux/arm64, under Debian's qemu-user-static
# (run as root; rerunnable):
#   1. `provision --platform linux/arm64` fills ETCD_ARM64_BIN_DIR with every bundled release
#      (3.4.23: Debian's arm64 packages; 3.5+: Go cross-compiled; 2.2-3.3: old Go toolchain, cross-compiled)
#   2. every arm64 binary there reports its version through qemu-aarch64-static
#   3. the image build (-Pimage,arm64): amd64 + arm64 images and their two-platform OCI index
#   4. the index is pushed (skopeo copy --all) to a loopback registry (Debian's docker-registry);
#      `podman manifest inspect` lists linux/amd64 and linux/arm64; `podman pull --arch arm64` pulls it
#   5. with qemu-aarch64 registered in binfmt_misc (F flag; unregistered at the end if this script
#      registered it), the arm64 image on real data (keys written by the host's etcd 3.6.16):
#      a no-op (target 3.6.16) and a one-minor upgrade (3.6.16 -> 3.7.3), each serving, keys checked
# Prints the time of each step. Never prints key values.
#
# Usage: scripts/arm64-check.sh [--no-build]      (--no-build: use image/target/jib-image-index.tar as is)
# Environment: ETCD_BIN_DIR (amd64 binaries, default ~/.cache/etcd-migrate/bin; the host etcd that writes
# the data), ETCD_ARM64_BIN_DIR (default ~/.cache/etcd-migrate/bin-arm64).
set -euo pipefail
cd "$(dirname "$0")/.."
build=true
[ "${1:-}" = --no-build ] && build=false
cache=${XDG_CACHE_HOME:-$HOME/.cache}/etcd-migrate
AMD64_BIN=${ETCD_BIN_DIR:-$cache/bin}
ARM64_BIN=${ETCD_ARM64_BIN_DIR:-$cache/bin-arm64}
KEYS=50
[ "$(id -u)" -eq 0 ] || { echo "arm64-check.sh: run as root (binfmt_misc, podman with host volumes)" >&2; exit 1; }

now_ms() { date +%s%3N; }
step_start=0
step() { step_start=$(now_ms); echo "== $*"; }
took() { echo "   took $(( $(now_ms) - step_start )) ms${1:+: $1}"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

work=$(mktemp -d /tmp/arm64-check.XXXXXX)
registry_pid=""
host_etcd_pid=""
binfmt_registered=""
binfmt_mounted=""
containers=()
cleanup() {
  for c in "${containers[@]}"; do podman rm -f -t 5 "$c" >/dev/null 2>&1 || true; done
  [ -z "$host_etcd_pid" ] || { kill "$host_etcd_pid" 2>/dev/null || true; wait "$host_etcd_pid" 2>/dev/null || true; }
  [ -z "$registry_pid" ] || { kill "$registry_pid" 2>/dev/null || true; wait "$registry_pid" 2>/dev/null || true; }
  [ -z "$binfmt_registered" ] || echo -1 >"/proc/sys/fs/binfmt_misc/$binfmt_registered" || true
  # unmount binfmt_misc if this script mounted it and nothing else got registered meanwhile
  if [ -n "$binfmt_mounted" ] && [ "$(ls /proc/sys/fs/binfmt_misc | grep -cv '^register$\|^status$')" = 0 ]; then
    umount /proc/sys/fs/binfmt_misc || true
  fi
  [ -z "${pulled:-}" ] || podman rmi -f "$pulled" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# ------------------------------------------------------------------ machine setup (idempotent)
step "setup: qemu-user-static, skopeo, docker-registry, gcc-aarch64-linux-gnu, podman, dpkg architecture arm64"
need=""
[ -x /usr/bin/qemu-aarch64-static ] || need="$need qemu-user-static"
command -v skopeo >/dev/null || need="$need skopeo"
command -v docker-registry >/dev/null || need="$need docker-registry"
command -v llvm-strip >/dev/null || need="$need llvm"
command -v aarch64-linux-gnu-gcc >/dev/null || need="$need gcc-aarch64-linux-gnu"
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  dpkg --add-architecture arm64
  apt-get update -qq
fi
if [ -n "$need" ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
fi
apt-cache show libc6:arm64 >/dev/null 2>&1 || apt-get update -qq
sh .ci/podman.sh install
took

# ------------------------------------------------------------------ 1. provision
step "provision --platform linux/arm64 --bin-dir $ARM64_BIN"
bash scripts/provision.sh "$ARM64_BIN" --platform linux/arm64 >"$work/provision.log" 2>&1 \
  || { tail -40 "$work/provision.log"; exit 1; }
took "$(grep -c 'already provisioned' "$work/provision.log" || true) already there, $(grep -c ': installed' "$work/provision.log" || true) installed"

# ------------------------------------------------------------------ 2. versions under qemu
step "every arm64 binary reports its version through qemu-aarch64-static"
sysroot=$cache/sysroot-arm64    # Debian's libc6:arm64, made by provision for the dynamically linked 3.4.23
checked=0
for f in "$ARM64_BIN"/etcd-* "$ARM64_BIN"/etcdctl-* "$ARM64_BIN"/etcdutl-*; do
  name=$(basename "$f"); tool=${name%-*}; v=${name##*-}
  file -b "$f" | grep -q 'ARM aarch64' || { echo "   $name is not an arm64 binary: $(file -b "$f")"; exit 1; }
  if [ "$tool" = etcd ]; then asks=("--version"); else asks=("version" "--version"); fi
  got=""
  for ask in "${asks[@]}"; do
    # 2.3-3.3 exit on arm64 unless ETCD_UNSUPPORTED_ARCH=arm64 (arm64 is supported from 3.4)
    out=$(env -i ETCD_UNSUPPORTED_ARCH=arm64 /usr/bin/qemu-aarch64-static -L "$sysroot" "$f" "$ask" 2>&1 || true)
    got=$(printf '%s\n' "$out" | sed -n 's/^\(etcd\|etcdctl\|etcdutl\) [Vv]ersion:\{0,1\} \([0-9.]*\).*/\2/p' | head -n 1)
    [ -z "$got" ] || break
  done
  [ "$got" = "$v" ] || { echo "   $name reports '${got:-nothing}', expected $v"; exit 1; }
  printf '   %-16s %s\n' "$name" "$got"
  checked=$((checked + 1))
done
took "$checked binaries"

# ------------------------------------------------------------------ 3. build
if $build; then
  step "image build: ./mvnw -Pimage,arm64 package -pl image -am -DskipTests"
  . scripts/java-home.sh
  ./mvnw -B -q -Pimage,arm64 package -pl image -am -DskipTests -Detcd.bin.dir="$AMD64_BIN" \
    -Detcd.arm64.bin.dir="$ARM64_BIN" >"$work/build.log" 2>&1 || { tail -60 "$work/build.log"; exit 1; }
  took
fi
index=image/target/jib-image-index.tar
[ -f "$index" ] || { echo "$index is missing (run without --no-build)"; exit 1; }
ref=$(tar -xOf "$index" index.json | sed -n 's/.*"org.opencontainers.image.ref.name":"\([^"]*\)".*/\1/p')
name=${ref%:*}; tag=${ref##*:}
echo "   $index: $(stat -c %s "$index") bytes, index $(cat "$index.digest"), $ref"
for t in image/target/jib-image.tar image/target/jib-image-arm64.tar; do
  echo "   $t: $(stat -c %s "$t") bytes (compressed layers + config)"
done

# ------------------------------------------------------------------ 4. registry, manifest, pull
step "the index through a loopback registry: skopeo copy --all, podman manifest inspect, podman pull --arch arm64"
rport=$(free_port)
mkdir -p "$work/registry"
cat >"$work/registry.yml" <<EOF
version: 0.1
storage:
  filesystem:
    rootdirectory: $work/registry
http:
  addr: 127.0.0.1:$rport
EOF
docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
registry_pid=$!
deadline=$(( $(now_ms) + 30000 ))
until curl -s -o /dev/null "http://127.0.0.1:$rport/v2/"; do
  [ "$(now_ms)" -lt "$deadline" ] || { cat "$work/registry.log"; exit 1; }
  sleep 0.1
done
remote=127.0.0.1:$rport/$name:$tag
# plain HTTP on loopback: podman 4.3's `manifest inspect` has no --tls-verify, so a registries.conf says so
printf '[[registry]]\nlocation = "127.0.0.1:%s"\ninsecure = true\n' "$rport" >"$work/registries.conf"
export CONTAINERS_REGISTRIES_CONF=$work/registries.conf
skopeo copy -q --all --dest-tls-verify=false "oci-archive:$index:$ref" "docker://$remote"
podman manifest inspect "$remote" >"$work/manifest.json"
platforms=$(grep -o '"architecture": *"[a-z0-9]*"' "$work/manifest.json" | sed 's/.*"\([a-z0-9]*\)"$/\1/' | sort | tr '\n' ' ')
echo "   platforms in the registry's index: $platforms"
[ "$platforms" = "amd64 arm64 " ] || { cat "$work/manifest.json"; exit 1; }
podman pull -q --arch arm64 "$remote" >/dev/null
pulled=$remote
arch=$(podman image inspect "$remote" --format '{{.Architecture}}')
echo "   pulled $remote: $arch, $(podman image inspect "$remote" --format '{{.Size}}') bytes"
[ "$arch" = arm64 ] || exit 1
took

# ------------------------------------------------------------------ 5. binfmt + runs
step "binfmt_misc: qemu-aarch64 (F flag)"
if ! mountpoint -q /proc/sys/fs/binfmt_misc; then
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  binfmt_mounted=true
fi
if [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] && grep -q '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64; then
  echo "   qemu-aarch64 already registered: using it"
else
  magic='\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
  mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
  binfmt_registered=etcd-migrate-qemu-aarch64
  [ ! -e "/proc/sys/fs/binfmt_misc/$binfmt_registered" ] || echo -1 >"/proc/sys/fs/binfmt_misc/$binfmt_registered"
  echo ":$binfmt_registered:M::$magic:$mask:/usr/bin/qemu-aarch64-static:F" >/proc/sys/fs/binfmt_misc/register
  echo "   registered $binfmt_registered (removed when this script ends)"
fi
took

ctl() { env -i "$AMD64_BIN/etcdctl-3.7.3" --endpoints "http://127.0.0.1:$1" "${@:2}"; }
# digest of every key and value under the prefix (never printed)
keys_digest() { ctl "$1" get /arm64-check/ --prefix -w json | python3 -c '
import json, sys, hashlib
kvs = json.load(sys.stdin).get("kvs", [])
h = hashlib.sha256()
for kv in sorted(kvs, key=lambda kv: kv["key"]):
    h.update(kv["key"].encode()); h.update(b"="); h.update(kv["value"].encode()); h.update(b"\n")
print(len(kvs), h.hexdigest())'; }

step "data: host etcd 3.6.16 (amd64) writes $KEYS keys"
data=$work/data
mkdir -m 700 "$data"
cport=$(free_port); pport=$(free_port)
env -i "$AMD64_BIN/etcd-3.6.16" --name etcd0 --data-dir "$data" \
  --listen-client-urls "http://127.0.0.1:$cport" --advertise-client-urls "http://127.0.0.1:$cport" \
  --listen-peer-urls "http://127.0.0.1:$pport" --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
  --initial-cluster "etcd0=http://127.0.0.1:$pport" >"$work/host-etcd.log" 2>&1 &
host_etcd_pid=$!
deadline=$(( $(now_ms) + 60000 ))
until ctl "$cport" put /arm64-check/probe x >/dev/null 2>&1; do
  [ "$(now_ms)" -lt "$deadline" ] || { tail -20 "$work/host-etcd.log"; exit 1; }
  sleep 0.1
done
ctl "$cport" del /arm64-check/probe >/dev/null
for i in $(seq 1 $KEYS); do ctl "$cport" put "/arm64-check/key-$i" "value-$i-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')" >/dev/null; done
expected=$(keys_digest "$cport")
kill "$host_etcd_pid"; wait "$host_etcd_pid" || true; host_etcd_pid=""
echo "3.6.16/etcd3" >"$data/version.txt"
echo "   $(echo "$expected" | cut -d' ' -f1) keys written"
took

# one run of the arm64 image: migrate to TARGET, exec etcd, serve; checks keys and version.txt, stops it
run_image() {
  local target=$1 name=em-arm64-check-$$-$1 port
  port=$(free_port)
  containers+=("$name")
  local start; start=$(now_ms)
  podman run -d --name "$name" -p "127.0.0.1:$port:2379" -v "$data:/var/etcd/data" -e ETCD_NAME=etcd0 "$remote" \
    --target-version "$target" -- --listen-client-urls http://0.0.0.0:2379 --advertise-client-urls "http://127.0.0.1:$port" >/dev/null
  local deadline=$(( start + 600000 ))
  until [ "$(keys_digest "$port" 2>/dev/null || true)" = "$expected" ]; do
    if [ "$(now_ms)" -ge "$deadline" ] || [ "$(podman inspect "$name" --format '{{.State.Running}}')" != true ]; then
      podman logs "$name" 2>&1 | tail -40; exit 1
    fi
    sleep 0.5
  done
  local served; served=$(( $(now_ms) - start ))
  local server; server=$(ctl "$port" endpoint status -w json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Status"]["version"])')
  # the container's PID 1 seen from the host: etcd (the runner exec'd it), run by qemu through binfmt_misc
  local hostpid; hostpid=$(podman inspect "$name" --format '{{.State.Pid}}')
  local pid1; pid1=$(tr '\0' ' ' <"/proc/$hostpid/cmdline" | grep -o '/usr/local/bin/etcd-[0-9.]*' | head -n 1 || true)
  local stop_start; stop_start=$(now_ms)
  podman stop -t 30 "$name" >/dev/null
  local exit_code; exit_code=$(podman inspect "$name" --format '{{.State.ExitCode}}')
  local stopped; stopped=$(( $(now_ms) - stop_start ))
  podman logs "$name" >"$work/$name.log" 2>&1
  podman rm "$name" >/dev/null
  local vt; vt=$(cat "$data/version.txt")
  echo "   target $target: keys $(echo "$expected" | cut -d' ' -f1)/$KEYS intact, etcd reports $server, PID 1 ${pid1:-?}, version.txt $vt; podman run -> keys served $served ms, stop $stopped ms (exit $exit_code)"
  [ "$server" = "$target" ] && [ "$vt" = "$target/etcd3" ] || exit 1
}

step "arm64 image, no-op: 3.6.16 data, --target-version 3.6.16"
run_image 3.6.16
took
step "arm64 image, one-minor upgrade: 3.6.16 -> 3.7.3"
run_image 3.7.3
took
echo "== arm64 check passed"
