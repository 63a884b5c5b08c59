#!/bin/sh
# Assembles single-platform image tarballs (Jib's jib:buildTar output, Docker-archive format) into one
# multi-platform OCI image archive: an OCI image layout (oci-layout, index.json, blobs/sha256/...) whose
# index.json names one OCI image index, tagged REF, that lists one image manifest per platform. Layers and
# configs are taken as Jib wrote them (the same digests as in the single-platform tarballs); every file in
# the archive gets a fixed mtime and owner, so the same inputs give a byte-identical archive.
#
# Usage: image-index.sh OUT.tar NAME:TAG ARCH=IMAGE.tar [ARCH=IMAGE.tar...]
# The index's org.opencontainers.image.ref.name is NAME:TAG: `podman load -i OUT.tar` names this machine's
# platform's image localhost/NAME:TAG (as loading Jib's single-platform tarball does); another platform's:
# `podman pull --arch arm64 oci-archive:OUT.tar:NAME:TAG`.
#   e.g. image-index.sh target/jib-image-index.tar etcd-migrate:3.7.3-0 amd64=target/jib-image.tar arm64=target/jib-image-arm64.tar
# To a registry, both platforms: `skopeo copy --all oci-archive:OUT.tar:NAME:TAG docker://REGISTRY/NAME:TAG`.
set -eu
out=$1
ref=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
layout=$work/layout
mkdir -p "$layout/blobs/sha256"
log() { echo "[image-index] $*" >&2; }

sha() { sha256sum "$1" | cut -d' ' -f1; }
size() { wc -c <"$1" | tr -d ' '; }
# Adds a file as a blob, prints its descriptor fields "digest size".
blob() {
  d=$(sha "$1")
  [ -f "$layout/blobs/sha256/$d" ] || cp "$1" "$layout/blobs/sha256/$d"
  echo "$d $(size "$1")"
}
# The one-line JSON of Jib's manifest.json: pull out the config name and the layer names.
json_list() { sed -n "s/.*\"$2\":\\[\\([^]]*\\)\\].*/\\1/p" "$1" | tr ',' '\n' | tr -d '"' | sed '/^$/d'; }
json_string() { sed -n "s/.*\"$2\":\"\\([^\"]*\\)\".*/\\1/p" "$1"; }

manifests=""
for pair in "$@"; do
  arch=${pair%%=*}
  tarball=${pair#*=}
  x=$work/x-$arch
  mkdir -p "$x"
  tar -xf "$tarball" -C "$x"
  config_name=$(json_string "$x/manifest.json" Config)
  # the config must say the platform the index claims for it
  grep -q "\"architecture\":\"$arch\"" "$x/$config_name" || { log "$tarball: its config is not for $arch"; exit 1; }
  set -- $(blob "$x/$config_name")
  config_desc="{\"mediaType\":\"application/vnd.oci.image.config.v1+json\",\"digest\":\"sha256:$1\",\"size\":$2}"
  layers=""
  for layer in $(json_list "$x/manifest.json" Layers); do
    set -- $(blob "$x/$layer")
    layers="$layers${layers:+,}{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"sha256:$1\",\"size\":$2}"
  done
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":%s,"layers":[%s]}' \
    "$config_desc" "$layers" >"$work/manifest-$arch.json"
  set -- $(blob "$work/manifest-$arch.json")
  variant=""
  [ "$arch" != arm64 ] || variant=',"variant":"v8"'
  manifests="$manifests${manifests:+,}{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"sha256:$1\",\"size\":$2,\"platform\":{\"architecture\":\"$arch\",\"os\":\"linux\"$variant}}"
  log "$arch: manifest sha256:$1"
  rm -rf "$x"
done
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[%s]}' "$manifests" >"$work/index-image.json"
set -- $(blob "$work/index-image.json")
log "index sha256:$1 ($ref)"
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.index.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"%s"}}]}' \
  "$1" "$2" "$ref" >"$layout/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@1 --format=posix \
  --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
  -C "$layout" -cf "$out.new" oci-layout index.json blobs
mv "$out.new" "$out"
echo "sha256:$1" >"$out.digest"
