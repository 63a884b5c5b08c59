#!/usr/bin/env bash
# Cost at scale (docs/benchmarks.md): the runner's 3.4 -> 3.7 against the sum of each etcd's own
# start-to-first-write on the same data, peak RSS and peak extra disk, at 100 MiB, 1 GiB and 4 GiB.
# Usage: bash scripts/bench-scale.sh [SIZES_MIB=100,1024,4096] [RUNS=3]
# The data dirs are written once (etcd 3.4.23, 8 GiB quota) and cached in ~/.cache/etcd-migrate/bench-data
# (about 6 GB for the three sizes); each run needs about 4x the size free besides. BENCH_VARIANTS=L1[#JAVA_OPTS],...
# adds launchers measured side by side (another commit's build, or ETCD_MIGRATE_JAVA_OPTS for this one).
. "$(dirname "$0")/run-bench.sh" dev.etcdmigrate.bench.ScaleBenchmark "${1:-100,1024,4096}" "${2:-3}"
