#!/usr/bin/env bash
# README command 1: a real migration end to end on this machine.
# Builds the runner, provisions the bundled etcd binaries (cached), writes Kubernetes-like sample
# data with the oldest bundled etcd, migrates it to the newest one, and checks every key.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/java-home.sh
BIN_DIR=${ETCD_BIN_DIR:-$PWD/.etcd-bin}

. scripts/build-runner.sh
runner/target/etcd-migrate provision --bin-dir "$BIN_DIR"
runner/target/etcd-migrate demo --bin-dir "$BIN_DIR" --work-dir .demo --keys "${DEMO_KEYS:-2000}"
