#!/usr/bin/env bash
# Installs Apache Kafka's broker jars (org.apache.kafka:kafka_2.13 and its runtime dependencies,
# from Maven Central with `mvn dependency:copy-dependencies`) for the real-broker test suite
# (test/support/kafka-real.ts runs them as a single KRaft node with `java kafka.Kafka`).
# Prints the directory holding the jars (its lib/) on stdout, and nothing else there.
#
# Idempotent: a finished install leaves lib/.complete, and a later run only checks for it (a few ms).
# Needs java (17+) and mvn on PATH (installed with apt-get when missing and root); exits 3 with
# the reason on stderr when either is still missing.
#
# Version: 3.9.1, the version docker-compose.yml runs (it explains why 3.9 and not 4.x for
# kafkajs 2.2.4). The real-broker suite is what proves kafkajs works against it. Another version
# with VAULTSTREAM_KAFKA_VERSION (e.g. 4.1.0; the suites pass on it too).
#
# Where: $VAULTSTREAM_KAFKA_HOME, else ${XDG_CACHE_HOME:-$HOME/.cache}/vaultstream/kafka-<version>.
set -euo pipefail

KAFKA_VERSION="${VAULTSTREAM_KAFKA_VERSION:-3.9.1}"
# Kafka logs through slf4j 1.7: bound to reload4j (log4j 1) up to 3.x, to log4j 2 from 4.0 on.
if [[ "${KAFKA_VERSION%%.*}" -ge 4 ]]; then
  LOG_DEPS=(org.apache.logging.log4j:log4j-slf4j-impl:2.24.3 org.apache.logging.log4j:log4j-core:2.24.3)
else
  LOG_DEPS=(org.slf4j:slf4j-reload4j:1.7.36)
fi

home="${VAULTSTREAM_KAFKA_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/vaultstream/kafka-${KAFKA_VERSION}}"
lib="$home/lib"
stamp="$lib/.complete"

if [[ -f "$stamp" && "$(cat "$stamp")" == "kafka_2.13-${KAFKA_VERSION}" ]]; then
  printf '%s\n' "$home"
  exit 0
fi

# A Java runtime and Maven from apt when missing and we are root on a Debian-like system.
if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "install-kafka: installing default-jre-headless and maven with apt-get" >&2
    { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      default-jre-headless maven; } >/dev/null 2>&1 || true
  fi
  for tool in java mvn; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "install-kafka: $tool not found on PATH (needs a Java 17+ runtime and Maven)" >&2
      exit 3
    fi
  done
fi

mkdir -p "$home"
# One install at a time (parallel test workers may call this at once); the winner's lib/ serves all.
exec 9>"$home/.lock"
flock 9
if [[ -f "$stamp" && "$(cat "$stamp")" == "kafka_2.13-${KAFKA_VERSION}" ]]; then
  printf '%s\n' "$home"
  exit 0
fi
work="$(mktemp -d "$home/.install.XXXXXX")"
trap 'rm -rf "$work"' EXIT

cat >"$work/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>vaultstream</groupId>
  <artifactId>kafka-broker-runtime</artifactId>
  <version>${KAFKA_VERSION}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>${KAFKA_VERSION}</version>
    </dependency>
$(for dep in "${LOG_DEPS[@]}"; do
  IFS=: read -r group artifact version <<<"$dep"
  printf '    <dependency><groupId>%s</groupId><artifactId>%s</artifactId><version>%s</version></dependency>\n' \
    "$group" "$artifact" "$version"
done)
  </dependencies>
</project>
EOF

echo "install-kafka: resolving kafka_2.13 ${KAFKA_VERSION} from Maven Central into $lib" >&2
if ! mvn -B -q -f "$work/pom.xml" dependency:copy-dependencies \
  -DincludeScope=runtime -DoutputDirectory="$work/lib" >"$work/mvn.log" 2>&1; then
  tail -n 30 "$work/mvn.log" >&2
  echo "install-kafka: mvn dependency:copy-dependencies failed" >&2
  exit 1
fi
if [[ ! -f "$work/lib/kafka_2.13-${KAFKA_VERSION}.jar" ]]; then
  echo "install-kafka: kafka_2.13-${KAFKA_VERSION}.jar missing after the copy" >&2
  exit 1
fi
printf 'kafka_2.13-%s' "$KAFKA_VERSION" >"$work/lib/.complete"
# Replace any earlier partial install by a rename, so a reader never sees half a lib/.
rm -rf "$lib"
mv "$work/lib" "$lib"
echo "install-kafka: $(find "$lib" -name '*.jar' | wc -l) jars installed" >&2
printf '%s\n' "$home"
