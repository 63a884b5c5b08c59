#!/usr/bin/env bash
# etcd2 conversion figures at scale (docs/benchmarks.md). Usage: bash scripts/bench-etcd2.sh [KEYS]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/java-home.sh
BIN_DIR=${ETCD_BIN_DIR:-$PWD/.etcd-bin}
./mvnw -B -q test-compile package -DskipTests -DskipITs -pl runner
runner/target/etcd-migrate provision --bin-dir "$BIN_DIR" >/dev/null 2>&1
cp=runner/target/test-classes:runner/target/etcd-migrate.jar:$(printf '%s:' runner/target/lib/*.jar)
exec "$JAVA_HOME/bin/java" -cp "$cp" dev.etcdmigrate.bench.Etcd2Benchmark \
  "$PWD/runner/target/etcd-migrate" "$BIN_DIR" "${1:-100000}"
