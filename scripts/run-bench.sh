# Sourced by the bench scripts: builds the runner and its test classes, provisions the binaries, and
# runs the benchmark class given as $1 with the launcher and bin dir (then the script's arguments).
# BENCH_JAVA_OPTS: JVM options of the benchmark itself, e.g. -Dbench.start.timeout=10m -Dbench.verbose=true.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/java-home.sh
BIN_DIR=${ETCD_BIN_DIR:-$PWD/.etcd-bin}
./mvnw -B -q test-compile package -DskipTests -DskipITs -pl runner -am
runner/target/etcd-migrate provision --bin-dir "$BIN_DIR" >/dev/null 2>&1
cp=runner/target/test-classes:test-fixtures/target/classes:runner/target/etcd-migrate.jar:runner/target/etcd-migrate-tools.jar:$(printf '%s:' runner/target/lib/*.jar)
bench_class=$1
shift
exec "$JAVA_HOME/bin/java" ${BENCH_JAVA_OPTS:-} -cp "$cp" "$bench_class" "$PWD/runner/target/etcd-migrate" "$BIN_DIR" "$@"
