# shellcheck shell=bash disable=SC2034  # the <broker>_* variables are read by scripts/brokers
# ElasticMQ, an SQS-compatible server, from Maven Central on 9324: message
# attributes, FIFO queues, ChangeMessageVisibility and ApproximateReceiveCount.
# Queues and messages are kept in an H2 file (ElasticMQ's messages-storage),
# emptied on every start; `restart` starts it again on that file.
sqs_env=BABELQUEUE_SQS_URL
sqs_ports="9324"
sqs_timeout=90
sqs_url() { echo "http://$HOST:9324"; }
# ElasticMQ answers before it has read its queues back from the H2 file: a client
# asking meanwhile is told its queue does not exist. So a restart records how many
# queues there were, and the broker is ready once it lists as many again.
sqs_ready() { probe sqs 9324 && sqs_restored; }
sqs_count() { probe sqs-count 9324 || echo 0; }
sqs_restored() {
  local before="$LAB/sqs/queues-before"
  [ -f "$before" ] || return 0
  [ "$(sqs_count)" -ge "$(cat "$before")" ] || return 1
  rm -f "$before"
}
sqs_why() {
  local before="$LAB/sqs/queues-before"
  if [ -f "$before" ] && probe sqs 9324; then
    echo "restoring its queues: $(sqs_count) of $(cat "$before") listed"
  else
    probe_why sqs 9324
  fi
}
sqs_halt() {
  probe sqs-count 9324 > "$LAB/sqs/queues-before" || rm -f "$LAB/sqs/queues-before"
  stop_pids sqs
}
sqs_install() { java_ensure && maven_classpath elasticmq >/dev/null; }
sqs_start() {
  local d="$LAB/sqs"
  rm -rf "$d/data" "$d/queues-before"; mkdir -p "$d/data"
  render elasticmq.conf "$d" "$d/elasticmq.conf"
  sqs_resume
}
# The server on its existing H2 file (queues, messages, receive counts).
sqs_resume() {
  local d="$LAB/sqs" cp
  cp=$(java_classpath elasticmq) || return 1
  spawn sqs "$d/sqs.log" java -Xms64m -Xmx256m -Djava.awt.headless=true \
    -Dconfig.file="$d/elasticmq.conf" -cp "$cp" org.elasticmq.server.Main
}
