#!/usr/bin/env bash
# The rollout figures of docs/benchmarks.md ("A cluster rollout across several minors"): 3.4 -> 3.7 on three members
# in network namespaces (root), one chained rollout against nine one-minor rollouts, alternating, RUNS times each.
# Usage: bash scripts/bench-rollout.sh [RUNS]   (default 1; prints one line per rollout and the medians' table)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/java-home.sh
BIN_DIR=${ETCD_BIN_DIR:-$PWD/.etcd-bin}
bash scripts/provision.sh "$BIN_DIR" >/dev/null
# the runner's test classpath, test-fixtures included (-am: built in this reactor, not read from a local repository)
./mvnw -B -q test-compile dependency:build-classpath -pl runner -am -Dmdep.includeScope=test \
  -Dmdep.outputFile=target/test.classpath
exec "$JAVA_HOME/bin/java" -Detcd.bin.dir="$BIN_DIR" -Detcd.migrate.launcher="$PWD/runner/target/etcd-migrate" \
  -cp "runner/target/test-classes:runner/target/classes:$(cat runner/target/test.classpath)" \
  dev.etcdmigrate.it.cluster.RolloutBenchmark "${1:-1}"
