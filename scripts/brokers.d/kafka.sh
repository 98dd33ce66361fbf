# shellcheck shell=bash disable=SC2034  # the <broker>_* variables are read by scripts/brokers
# Apache Kafka in KRaft mode (one node, broker + controller) from Maven
# Central, on 9092 (controller 9093); storage formatted fresh on every start
# (`restart` keeps it).
kafka_env=BABELQUEUE_KAFKA_URL
kafka_ports="9092 9093"
kafka_timeout=120
# Closing hundreds of partitions (the suites leave that many) takes tens of
# seconds on a busy machine; a SIGKILL instead costs a log recovery at the start.
kafka_stop_grace=120
kafka_url() { echo "kafka://$HOST:9092"; }
kafka_ready() { probe kafka 9092; }
kafka_why() { probe_why kafka 9092; }
kafka_install() { java_ensure && maven_classpath kafka >/dev/null; }
kafka_start() {
  local d="$LAB/kafka" cp cluster_id
  cp=$(java_classpath kafka) || return 1
  rm -rf "$d/data"; mkdir -p "$d/data"
  render kafka.properties "$d" "$d/server.properties"
  cluster_id=$(kafka_cluster_id)
  java -Xmx256m -Dlog4j2.configurationFile="$HERE/conf/kafka-log4j2.properties" -cp "$cp" \
    kafka.tools.StorageTool format -t "$cluster_id" -c "$d/server.properties" >"$d/format.log" 2>&1 \
    || { tail -n 20 "$d/format.log" >&2; return 1; }
  kafka_resume
}
# The node on its existing storage (a restart keeps topics, records and offsets).
kafka_resume() {
  local d="$LAB/kafka" cp
  cp=$(java_classpath kafka) || return 1
  spawn kafka "$d/kafka.log" java -Xms128m -Xmx512m -XX:+UseG1GC -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$HERE/conf/kafka-log4j2.properties" -cp "$cp" kafka.Kafka "$d/server.properties"
}
