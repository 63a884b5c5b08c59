#!/usr/bin/env bash
# README command 2: every test. Unit tests, then (mvn verify) the runner is packaged, the bundled
# etcd binaries are provisioned into ETCD_BIN_DIR (default .etcd-bin, cached), and the integration
# tests run against them. Extra arguments go to Maven (e.g. -Pimage for the container image tests).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/java-home.sh
BIN_DIR=${ETCD_BIN_DIR:-$PWD/.etcd-bin}

# -am: with -pl runner (or runner,image), the modules they need come along (the parent and test-fixtures), so a
# fresh clone with nothing of this project in the local repository builds them too.
exec ./mvnw -B verify -am -Detcd.bin.dir="$BIN_DIR" "$@"
