#!/usr/bin/env bash
# Builds Kubernetes tools from the Go module proxy (Go is a build-time tool only) and caches them:
#   bash scripts/build-kubernetes.sh [--version v1.37.2] TOOL...
# TOOL: kube-apiserver | kubeadm | kubelet | kubectl | etcd-migrate-k8s (Kubernetes' own etcd `migrate`
# tool, k8s.io/kubernetes/cluster/images/etcd/migrate) | crictl (sigs.k8s.io/cri-tools, the release of
# the same minor: v1.<minor>.0). Prints each binary's path on stdout, one per line; everything else goes
# to stderr. A cached binary (marker present) is reused at once.
#
# k8s.io/kubernetes cannot be built with `go install M@V`: its go.mod replaces every staging module
# (k8s.io/api, ...) with ./staging/src/..., which a module zip lacks. A throwaway wrapper module
# requires k8s.io/kubernetes and replaces each staging module with its published v0.<minor>.<patch>
# (the list is read from k8s.io/kubernetes's own go.mod, so it follows the release).
set -euo pipefail

version=v1.37.2
tools=()
while [ $# -gt 0 ]; do
  case "$1" in
    --version) version=$2; shift 2 ;;
    --version=*) version=${1#--version=}; shift ;;
    -h|--help) sed -n '2,6p' "$0" >&2; exit 0 ;;
    kube-apiserver|kubeadm|kubelet|kubectl|etcd-migrate-k8s|crictl) tools+=("$1"); shift ;;
    *) echo "unknown argument: $1 (tools: kube-apiserver kubeadm kubelet kubectl etcd-migrate-k8s crictl)" >&2; exit 2 ;;
  esac
done
[ ${#tools[@]} -gt 0 ] || { echo "usage: $0 [--version vX.Y.Z] TOOL..." >&2; exit 2; }
[[ $version =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || { echo "version must look like v1.34.4, not $version" >&2; exit 2; }
staging_version="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"

export PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "Go is needed to build Kubernetes tools" >&2; exit 1; }

cache=${XDG_CACHE_HOME:-$HOME/.cache}/etcd-migrate/kubernetes/$version
mkdir -p "$cache"

package_of() {
  case "$1" in
    kube-apiserver) echo k8s.io/kubernetes/cmd/kube-apiserver ;;
    kubeadm) echo k8s.io/kubernetes/cmd/kubeadm ;;
    kubelet) echo k8s.io/kubernetes/cmd/kubelet ;;
    kubectl) echo k8s.io/kubernetes/cmd/kubectl ;;
    crictl) echo sigs.k8s.io/cri-tools/cmd/crictl ;;
    etcd-migrate-k8s) echo k8s.io/kubernetes/cluster/images/etcd/migrate ;;
  esac
}

all_cached() {
  local t
  for t in "${tools[@]}"; do [ -f "$cache/$t.done" ] && [ -x "$cache/$t" ] || return 1; done
}

print_paths() {
  local t
  for t in "${tools[@]}"; do echo "$cache/$t"; done
}

# Fast path without the lock: a marker is written only after its binary is complete.
if all_cached; then print_paths; exit 0; fi

# Two callers building the same version at once: the second waits and then finds the markers.
exec 9>"$cache/.lock"
flock 9
if all_cached; then print_paths; exit 0; fi

work=$(mktemp -d "${TMPDIR:-/tmp}/build-kubernetes.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export CGO_ENABLED=0 GO111MODULE=on GOTOOLCHAIN=local GOFLAGS=-mod=mod

started=$(date +%s)
echo "build-kubernetes: resolving k8s.io/kubernetes@$version" >&2
info=$(cd "$work" && go mod download -json "k8s.io/kubernetes@$version")
gomod=$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p' <<<"$info" | head -1)
commit=$(sed -n 's/^[[:space:]]*"Hash": "\([0-9a-f]\{40\}\)",\{0,1\}$/\1/p' <<<"$info" | head -1)
[ -f "$gomod" ] || { echo "no go.mod for k8s.io/kubernetes@$version in: $info" >&2; exit 1; }

# `k8s.io/api => ./staging/src/k8s.io/api` lines -> module names.
mapfile -t staging < <(sed -n 's#^[[:space:]]*\(replace[[:space:]]\+\)\{0,1\}\(k8s\.io/[^[:space:]]\+\)[[:space:]]\+=>[[:space:]]\+\./staging/.*#\2#p' "$gomod" | sort -u)
[ ${#staging[@]} -gt 0 ] || { echo "no staging replace lines in $gomod" >&2; exit 1; }

cd "$work"
cat >go.mod <<EOF
module etcd-migrate.local/build-kubernetes

go 1.24

require k8s.io/kubernetes $version
EOF
skipped=()
for m in "${staging[@]}"; do
  # Not every staging module is published (e.g. sample-cli-plugin, sample-controller).
  if go list -m -json "$m@$staging_version" >/dev/null 2>&1; then
    go mod edit -replace "$m=$m@$staging_version"
  else
    skipped+=("$m")
  fi
done
echo "build-kubernetes: ${#staging[@]} staging modules pinned to $staging_version; unpublished, left out: ${skipped[*]:-none}" >&2

minor=${version#v1.}; minor=${minor%%.*}
cri_tools_version="v1.$minor.0"
pkg=k8s.io/component-base/version
cpkg=k8s.io/client-go/pkg/version
ldflags="-s -w"
for p in $pkg $cpkg; do
  ldflags="$ldflags -X $p.gitVersion=$version -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  ldflags="$ldflags -X $p.gitCommit=${commit:-unknown} -X $p.gitTreeState=clean"
  ldflags="$ldflags -X $p.buildDate=1970-01-01T00:00:00Z"
done

for t in "${tools[@]}"; do
  if [ -f "$cache/$t.done" ] && [ -x "$cache/$t" ]; then continue; fi
  rm -f "$cache/$t.done"
  t0=$(date +%s)
  if [ "$t" = crictl ]; then
    # a module of its own, with no replace directives: installed at its release, outside the wrapper module
    echo "build-kubernetes: go install $(package_of "$t")@$cri_tools_version" >&2
    rm -rf "$work/gobin"
    GOFLAGS= GOBIN="$work/gobin" go install -trimpath \
      -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$cri_tools_version" \
      "$(package_of "$t")@$cri_tools_version" >&2
    mv -f "$work/gobin/crictl" "$cache/$t.tmp"
  else
    echo "build-kubernetes: go build $(package_of "$t") ($version)" >&2
    go build -trimpath -ldflags "$ldflags" -o "$cache/$t.tmp" "$(package_of "$t")" >&2
  fi
  mv -f "$cache/$t.tmp" "$cache/$t"
  echo "$version $(package_of "$t") built $(date -u +%FT%TZ)" >"$cache/$t.done"
  echo "build-kubernetes: $t built in $(( $(date +%s) - t0 )) s" >&2
done
echo "build-kubernetes: done in $(( $(date +%s) - started )) s" >&2
print_paths
