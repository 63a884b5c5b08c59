# Sourced by the project's scripts: points JAVA_HOME at a Java 25 JDK (Temurin under /usr/lib/jvm),
# because the machines' default java is 17 and Maven and the runner need 25.
if [ -z "${JAVA_HOME:-}" ] || ! grep -qs '^JAVA_VERSION="2[5-9]' "$JAVA_HOME/release"; then
  for candidate in /usr/lib/jvm/temurin-25* /usr/lib/jvm/*-25*; do
    if grep -qs '^JAVA_VERSION="25' "$candidate/release"; then JAVA_HOME=$candidate; break; fi
  done
fi
if ! grep -qs '^JAVA_VERSION="2[5-9]' "${JAVA_HOME:-/nonexistent}/release"; then
  echo "no Java 25 JDK found under /usr/lib/jvm; install Temurin 25 or set JAVA_HOME" >&2
  exit 2
fi
export JAVA_HOME
