#!/usr/bin/env bash
# etcd2 conversion figures at scale (docs/benchmarks.md). Usage: bash scripts/bench-etcd2.sh [KEYS]
. "$(dirname "$0")/run-bench.sh" dev.etcdmigrate.bench.Etcd2Benchmark "${1:-100000}"
