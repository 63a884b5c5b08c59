# Sourced by the scripts: builds the runner (runner/target/etcd-migrate) unless it is newer than every
# source, pom and catalog file, so a rerun of a script does not wait for Maven.
if [ ! -x runner/target/etcd-migrate ] || [ ! -f runner/target/etcd-migrate.jar ] \
   || [ -n "$(find pom.xml runner/pom.xml runner/src versions -newer runner/target/etcd-migrate.jar -print -quit)" ]; then
  ./mvnw -B -q package -DskipTests -DskipITs -pl runner -am
fi
