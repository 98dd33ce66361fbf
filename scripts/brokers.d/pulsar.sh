# shellcheck shell=bash disable=SC2034  # the <broker>_* variables are read by scripts/brokers
# Apache Pulsar standalone (broker + one bookie, RocksDB metadata) from Maven
# Central: binary protocol on 6650, admin and WebSocket API on 8080; the URL is
# the web service (http), where the WebSocket API lives. Data fresh every start
# (`restart` keeps it).
pulsar_env=BABELQUEUE_PULSAR_URL
pulsar_ports="6650 8080"
pulsar_timeout=240
pulsar_url() { echo "http://$HOST:8080"; }
pulsar_ready() { probe pulsar 8080; }
pulsar_why() { probe_why pulsar 8080; }
pulsar_install() { java_ensure && maven_classpath pulsar >/dev/null; }
pulsar_start() {
  local d="$LAB/pulsar" cp
  cp=$(java_classpath pulsar) || return 1
  rm -rf "$d/data"; mkdir -p "$d/data"
  render pulsar-standalone.conf "$d" "$d/standalone.conf"
  pulsar_resume
}
# The standalone on its existing metadata and bookie folders (topics, backlogs
# and subscriptions survive a restart).
pulsar_resume() {
  local d="$LAB/pulsar" cp
  cp=$(java_classpath pulsar) || return 1
  spawn pulsar "$d/pulsar.log" java -Xms128m -Xmx512m -XX:MaxDirectMemorySize=256m -XX:+UseG1GC \
    -Djava.awt.headless=true -Dpulsar.log.dir="$d" \
    --add-opens java.base/jdk.internal.platform=ALL-UNNAMED \
    --add-opens java.management/sun.management=ALL-UNNAMED \
    -cp "$cp" org.apache.pulsar.PulsarStandaloneStarter --config "$d/standalone.conf" \
    --no-stream-storage --no-functions-worker \
    --metadata-dir "$d/data/metadata" --bookkeeper-dir "$d/data/bookkeeper"
}
