#!/usr/bin/env bash
# Builds bbolt's own command-line tool (`bbolt check`, the differential test's oracle) from the Go module
# proxy and caches it, one dir per module version (Go is a build-time tool only):
#   bash scripts/build-bbolt.sh MODULE@VERSION...   e.g. go.etcd.io/bbolt@v1.4.3
# MODULE is go.etcd.io/bbolt, or github.com/coreos/bbolt and github.com/boltdb/bolt for what etcd 3.0-3.3
# pinned (their tool is cmd/bolt). Prints each
# binary's path on stdout, one per line; everything else goes to stderr. A cached binary is reused at once.
# BBOLT_CACHE: the cache dir (default $HOME/.cache/etcd-migrate/bbolt).
set -euo pipefail

[ $# -gt 0 ] || { echo "usage: $0 MODULE@VERSION..." >&2; exit 2; }
cache=${BBOLT_CACHE:-$HOME/.cache/etcd-migrate/bbolt}
export PATH=$PATH:/usr/local/go/bin
for spec in "$@"; do
  [[ $spec =~ ^(go\.etcd\.io/bbolt|github\.com/coreos/bbolt|github\.com/boltdb/bolt)@(v[0-9A-Za-z.+-]+)$ ]] \
    || { echo "not a bbolt module version: $spec" >&2; exit 2; }
  module=${BASH_REMATCH[1]}
  version=${BASH_REMATCH[2]}
  dir="$cache/${module//\//_}@$version"
  if [ ! -x "$dir/bbolt" ]; then
    command -v go >/dev/null || { echo "Go is needed to build bbolt $version" >&2; exit 1; }
    tmp=$(mktemp -d "$cache.XXXXXX" 2>/dev/null || { mkdir -p "$cache" && mktemp -d "$cache.XXXXXX"; })
    trap 'rm -rf "$tmp"' EXIT
    # GOFLAGS=-mod=mod: the old forks carry no go.mod of their own
    echo "building $module/cmd/bbolt@$version" >&2
    GOBIN="$tmp" GOFLAGS=-mod=mod CGO_ENABLED=0 go install "$module/cmd/bbolt@$version" >&2 2>/dev/null \
      || GOBIN="$tmp" GOFLAGS=-mod=mod CGO_ENABLED=0 go install "$module/cmd/bolt@$version" >&2
    mkdir -p "$dir"
    mv "$tmp"/bbolt "$dir/bbolt.new" 2>/dev/null || mv "$tmp"/bolt "$dir/bbolt.new"
    mv "$dir/bbolt.new" "$dir/bbolt"
    rm -rf "$tmp"
    trap - EXIT
  fi
  echo "$dir/bbolt"
done
