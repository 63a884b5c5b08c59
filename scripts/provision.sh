#!/usr/bin/env bash
# Builds the runner and provisions every catalog release into DIR (default .etcd-bin):
# etcd-<v>, etcdctl-<v>, etcdutl-<v>. Usage: bash scripts/provision.sh [DIR] [VERSION...]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/java-home.sh
BIN_DIR=${1:-$PWD/.etcd-bin}
shift || true
. scripts/build-runner.sh
exec runner/target/etcd-migrate provision --bin-dir "$BIN_DIR" "$@"
