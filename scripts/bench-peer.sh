#!/usr/bin/env bash
# Downtime against Kubernetes' own etcd migrate tool (docs/benchmarks.md): both tools alternating on
# copies of the same 3.4.23 data, from start until the target etcd serves a write on its real port.
# Usage: bash scripts/bench-peer.sh [SIZES_MIB=0,250] [RUNS=5] [TARGETS=3.5.35,3.6.16]   (0 = 200 small keys)
# Also prints the floors: the target etcd alone on the same data, and each of our runs split by its events.
# BENCH_LAUNCHER=PATH measures another build of the runner; BENCH_VARIANTS=PATH[,PATH] more builds in the same rotation. Builds Kubernetes' tool once with scripts/build-kubernetes.sh (Go module proxy; cached).
set -euo pipefail
k8s=$(bash "$(dirname "$0")/build-kubernetes.sh" --version v1.34.4 etcd-migrate-k8s) # the peer the figures were taken against, not build-kubernetes.sh's default
. "$(dirname "$0")/run-bench.sh" dev.etcdmigrate.bench.PeerBenchmark "$k8s" "${1:-0,250}" "${2:-5}" "${3:-3.5.35,3.6.16}"
