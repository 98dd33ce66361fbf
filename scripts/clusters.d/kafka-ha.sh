# shellcheck shell=bash disable=SC2034  # the kafka_ha_* variables are read by scripts/clusters
# kafka-ha: three Apache Kafka nodes in KRaft mode (each broker and controller)
# on loopback, from the same Maven Central jars as the lab's single Kafka
# (scripts/brokers.d/kafka.sh): clients on 19092/19192/19292, controllers on
# 19093/19193/19293. Topics get replication factor 3 and min.insync.replicas=2,
# so a write acknowledged with acks=all is on two nodes and survives one node's
# death. Everything under .clusters/kafka-ha/ (node1..3: config, data, log);
# storage formatted fresh on every start, kept by kill-node/restore-node.

KAFKA_HA_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KAFKA_HA_BROKERS_D="$KAFKA_HA_ROOT/scripts/brokers.d"
# The broker lab's download cache: the jars and classpath are shared with it.
KAFKA_HA_CACHE="${BABELQUEUE_BROKERS_DIR:-$KAFKA_HA_ROOT/.brokers}/cache"
KAFKA_HA_DIR="${BABELQUEUE_CLUSTERS_DIR:-$KAFKA_HA_ROOT/.clusters}/kafka-ha"
# scripts/clusters loads lib.sh; sourced on its own (a test) this file loads it.
if ! declare -F maven_classpath >/dev/null; then
  LAB=${LAB:-$KAFKA_HA_DIR/..}
  # shellcheck source=../brokers.d/lib.sh
  source "$KAFKA_HA_BROKERS_D/lib.sh"
fi
if ! declare -F java_ensure >/dev/null; then
  # shellcheck source=../brokers.d/java.sh
  source "$KAFKA_HA_BROKERS_D/java.sh"
fi

kafka_ha_env=BABELQUEUE_KAFKA_HA_URL
kafka_ha_timeout=180
kafka_ha_ports="19092 19093 19192 19193 19292 19293"
kafka_ha_nodes="1 2 3"
kafka_ha_port() { echo $(( 18992 + 100 * $1 )); }          # 19092, 19192, 19292
kafka_ha_url() { echo "kafka://127.0.0.1:19092,127.0.0.1:19192,127.0.0.1:19292"; }

# Ready when every node answers Metadata with a controller elected.
kafka_ha_ready() {
  local n
  for n in $kafka_ha_nodes; do kafka_ha_probe "$n" || return 1; done
}
kafka_ha_why() {
  local n
  for n in $kafka_ha_nodes; do
    kafka_ha_probe "$n" || { echo "node $n: $(python3 "$KAFKA_HA_BROKERS_D/probe.py" kafka 127.0.0.1 "$(kafka_ha_port "$n")" 2>&1 | tail -n 1)"; return; }
  done
}
kafka_ha_probe() { python3 "$KAFKA_HA_BROKERS_D/probe.py" kafka 127.0.0.1 "$(kafka_ha_port "$1")" >/dev/null 2>&1; }

kafka_ha_classpath() {
  mkdir -p "$KAFKA_HA_CACHE"
  java_ensure >/dev/null || return 1
  local f; f=$(HERE=$KAFKA_HA_BROKERS_D CACHE=$KAFKA_HA_CACHE maven_classpath kafka) && cat "$f"
}

kafka_ha_install() { kafka_ha_classpath >/dev/null; }
kafka_ha_start() {
  local n cp cluster_id d
  cp=$(kafka_ha_classpath) || return 1
  cluster_id=$(kafka_cluster_id)
  for n in $kafka_ha_nodes; do
    d="$KAFKA_HA_DIR/node$n"
    rm -rf "$d"; mkdir -p "$d/data"
    kafka_ha_config "$n" > "$d/server.properties"
    java -Xmx256m -Dlog4j2.configurationFile="$KAFKA_HA_BROKERS_D/conf/kafka-log4j2.properties" -cp "$cp" \
      kafka.tools.StorageTool format -t "$cluster_id" -c "$d/server.properties" >"$d/format.log" 2>&1 \
      || { tail -n 20 "$d/format.log" >&2; return 1; }
  done
  for n in $kafka_ha_nodes; do kafka_ha_spawn "$n" "$cp"; done
}

# kill-node N: SIGKILL, as a crashed machine (no controlled shutdown, no leader handover).
kafka_ha_kill_node() { kill_node_pids kafka-ha "$1"; }

# restore-node N: the node again on its own storage; it catches up from the
# others and rejoins the in-sync replicas. Back once it answers.
kafka_ha_restore_node() {
  local cp
  [ -z "$(node_pid kafka-ha "$1")" ] || { echo "kafka-ha node $1 is already running" >&2; return 1; }
  cp=$(kafka_ha_classpath) || return 1
  kafka_ha_spawn "$1" "$cp"
}
kafka_ha_node_ready() { kafka_ha_probe "$1"; }

kafka_ha_spawn() {
  local d="$KAFKA_HA_DIR/node$1"
  start_node kafka-ha "$1" "$d/kafka.log" java -Xms128m -Xmx448m -XX:+UseG1GC -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$KAFKA_HA_BROKERS_D/conf/kafka-log4j2.properties" -cp "$2" \
    kafka.Kafka "$d/server.properties"
}

kafka_ha_config() {
  local n=$1 port cport
  port=$(kafka_ha_port "$n"); cport=$(( port + 1 ))
  cat <<PROPS
process.roles=broker,controller
node.id=$n
controller.quorum.voters=1@127.0.0.1:19093,2@127.0.0.1:19193,3@127.0.0.1:19293
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$KAFKA_HA_DIR/node$n/data
# Every partition on all three nodes, and a write acknowledged (acks=all) only
# once two replicas have it: one node may die without losing what was acknowledged.
default.replication.factor=3
min.insync.replicas=2
unclean.leader.election.enable=false
num.partitions=1
auto.create.topics.enable=true
offsets.topic.replication.factor=3
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
share.coordinator.state.topic.replication.factor=3
share.coordinator.state.topic.min.isr=2
group.initial.rebalance.delay.ms=0
# A dead node is noticed within seconds (defaults 2 s / 9 s), so its
# partitions get a new leader soon after a kill.
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=3000
PROPS
}
