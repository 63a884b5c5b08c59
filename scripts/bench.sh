#!/usr/bin/env bash
# Runner start-up and per-step figures (docs/benchmarks.md). Usage: bash scripts/bench.sh [RUNS]
. "$(dirname "$0")/run-bench.sh" dev.etcdmigrate.bench.RunnerBenchmark "${1:-10}"
