# shellcheck shell=bash disable=SC2034  # the <broker>_* variables are read by scripts/brokers
# ElasticMQ, an SQS-compatible server, from Maven Central on 9324: message
# attributes, FIFO queues, ChangeMessageVisibility and ApproximateReceiveCount.
# Queues and messages are kept in an H2 file (ElasticMQ's messages-storage),
# emptied on every start; `restart` starts it again on that file.
sqs_env=BABELQUEUE_SQS_URL
sqs_ports="9324"
sqs_timeout=90
sqs_url() { echo "http://$HOST:9324"; }
sqs_ready() { probe sqs 9324; }
sqs_why() { probe_why sqs 9324; }
sqs_install() { java_ensure && maven_classpath elasticmq >/dev/null; }
sqs_start() {
  local d="$LAB/sqs"
  rm -rf "$d/data"; mkdir -p "$d/data"
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
