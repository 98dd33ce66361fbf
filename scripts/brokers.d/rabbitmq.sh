# shellcheck shell=bash disable=SC2034  # the <broker>_* variables are read by scripts/brokers
# RabbitMQ (Debian's rabbitmq-server) on 5672, run directly (no systemd here)
# as root with its node, cookie, data and logs under .brokers/rabbitmq.
rabbitmq_env=BABELQUEUE_RABBITMQ_URL
rabbitmq_ports="5672 25672"
rabbitmq_timeout=120
rabbitmq_url() { echo "amqp://guest:guest@$HOST:5672"; }
rabbitmq_ready() { probe amqp091 5672; }
rabbitmq_why() { probe_why amqp091 5672; }
rabbitmq_install() { apt_ensure /usr/lib/rabbitmq/bin/rabbitmq-server rabbitmq-server; }

# The environment of the node and of the CLI tools that talk to it: Erlang's
# port mapper and distribution stay on loopback too.
rabbitmq_environment() {
  local d="$LAB/rabbitmq"
  export HOME="$d" RABBITMQ_NODENAME=babelqueue@localhost RABBITMQ_NODE_IP_ADDRESS="$HOST" \
    RABBITMQ_NODE_PORT=5672 RABBITMQ_DIST_PORT=25672 RABBITMQ_MNESIA_BASE="$d/mnesia" \
    RABBITMQ_LOG_BASE="$d/log" RABBITMQ_PID_FILE="$d/rabbitmq.pid" \
    RABBITMQ_CONFIG_FILE="$d/rabbitmq.conf" RABBITMQ_ENABLED_PLUGINS_FILE="$d/enabled_plugins" \
    ERL_EPMD_ADDRESS="$HOST" \
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}" \
    RABBITMQ_CTL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
}

rabbitmq_start() {
  local d="$LAB/rabbitmq"
  rm -rf "$d/mnesia" "$d/log"; mkdir -p "$d/mnesia" "$d/log"
  render rabbitmq.conf "$d" "$d/rabbitmq.conf"
  cp "$HERE/conf/rabbitmq-plugins" "$d/enabled_plugins"
  # Erlang starts its port mapper (epmd) on demand and leaves it behind: note
  # whether this start brings it up, so that `down` only stops its own.
  port_busy 4369 || touch "$d/epmd-started-here"
  rabbitmq_resume
}

# The node on its existing Mnesia directory (durable queues, persistent messages).
rabbitmq_resume() {
  local d="$LAB/rabbitmq"
  ( rabbitmq_environment; spawn rabbitmq "$d/rabbitmq.log" /usr/lib/rabbitmq/bin/rabbitmq-server )
}

rabbitmq_stop() {
  local d="$LAB/rabbitmq"
  stop_pids rabbitmq
  if [ -f "$d/epmd-started-here" ] && ! epmd -names 2>/dev/null | grep -q '^name '; then
    epmd -kill >/dev/null 2>&1 || true
  fi
  rm -f "$d/epmd-started-here"
}
