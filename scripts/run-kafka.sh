#!/usr/bin/env bash
# Runs a local single-node Apache Kafka broker (KRaft, broker and controller in one process) in
# the foreground, from the jars scripts/install-kafka.sh installs (from Maven Central; no Docker):
# the broker of the distributed mode on one machine (docs/operations.md). Ctrl-C stops it; run it
# again on the same --dir and it resumes with its topics, messages and committed offsets.
#
#   scripts/run-kafka.sh [--dir DIR] [--port PORT] [--controller-port PORT]
#
#   --dir              where the broker keeps its config and data (default .kafka in the current
#                      directory); formatted on the first run
#   --port             the client port (default 9092): KAFKA_BROKERS=127.0.0.1:<port>
#   --controller-port  the KRaft controller's port (default 9093)
#
# Prints "kafka: serving on 127.0.0.1:<port>" on stderr once it accepts clients. Needs java (17+)
# and mvn on PATH the first time (scripts/install-kafka.sh says how to get them).
set -euo pipefail

dir=.kafka
port=9092
controller_port=9093
while (($#)); do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --controller-port) controller_port="$2"; shift 2 ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-kafka: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

home="$(bash "$(dirname "${BASH_SOURCE[0]}")/install-kafka.sh")"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
config="$dir/server.properties"

# One node in combined mode on loopback; the internal topics replicated once (the default of 3
# would leave __consumer_offsets uncreated and every consumer group without a coordinator), the
# offsets topic in 8 partitions instead of 50 (a faster first group join), a new group's first
# member joining at once, and a restarted broker registering 4 s after a SIGKILL instead of 9 s.
cat >"$config" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:${controller_port}
listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controller_port}
advertised.listeners=PLAINTEXT://127.0.0.1:${port}
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=${dir}/data
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
offsets.topic.num.partitions=8
group.initial.rebalance.delay.ms=0
broker.session.timeout.ms=4000
broker.heartbeat.interval.ms=1000
EOF

cat >"$dir/log4j.properties" <<'EOF'
log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.server.KafkaRaftServer=INFO
EOF
# The same for Kafka 4.x (VAULTSTREAM_KAFKA_VERSION), which logs through log4j 2.
cat >"$dir/log4j2.properties" <<'EOF'
appender.stderr.type=Console
appender.stderr.name=STDERR
appender.stderr.target=SYSTEM_ERR
appender.stderr.layout.type=PatternLayout
appender.stderr.layout.pattern=[%d] %p %m (%c)%n
rootLogger.level=warn
rootLogger.appenderRef.stderr.ref=STDERR
logger.started.name=kafka.server.KafkaRaftServer
logger.started.level=info
EOF

# The classpath is a glob that java itself expands: it must reach java quoted.
jvm=(-Xms128m -Xmx512m -Djava.awt.headless=true "-Dlog4j.configuration=file:$dir/log4j.properties"
  "-Dlog4j2.configurationFile=$dir/log4j2.properties" -cp "$home/lib/*")

if [[ ! -f "$dir/data/meta.properties" ]]; then
  # A new cluster id: 16 random bytes, URL-safe base64 (one starting with '-' would read as an option).
  id="$(java "${jvm[@]}" kafka.tools.StorageTool random-uuid)"
  while [[ "$id" == -* ]]; do id="$(java "${jvm[@]}" kafka.tools.StorageTool random-uuid)"; done
  java "${jvm[@]}" kafka.tools.StorageTool format -t "$id" -c "$config" >/dev/null
fi

echo "kafka: starting on 127.0.0.1:${port} (data in $dir/data)" >&2
# Foreground; "Kafka Server started" in its log, rewritten as the line operators wait for.
exec java "${jvm[@]}" kafka.Kafka "$config" 2> >(sed -u "s|.*Kafka Server started.*|kafka: serving on 127.0.0.1:${port}|" >&2)
