#!/usr/bin/env bash
# The rollout figures of docs/benchmarks.md ("A cluster rollout across several minors"): 3.4 -> 3.7 on three members
# in network namespaces (root), one chained rollout against nine one-minor rollouts, alternating, RUNS times each.
# Usage: bash scripts/bench-rollout.sh [RUNS]   (default 1; prints one line per rollout and the medians' table)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/java-home.sh
BIN_DIR=${ETCD_BIN_DIR:-$PWD/.etcd-bin}
bash scripts/provision.sh "$BIN_DIR" >/dev/null
./mvnw -B -q test-compile -pl runner
exec ./mvnw -B -q -pl runner exec:java -Dexec.mainClass=dev.etcdmigrate.it.cluster.RolloutBenchmark \
  -Dexec.classpathScope=test -Dexec.args="${1:-1}" -Detcd.bin.dir="$BIN_DIR" \
  -Detcd.migrate.launcher="$PWD/runner/target/etcd-migrate"
