# shellcheck shell=bash disable=SC2034  # the <id>_* variables are read by scripts/clusters
# Three RabbitMQ nodes (Debian's rabbitmq-server) clustered on loopback:
# bqha1..3@localhost, AMQP on 5691-5693, Erlang distribution on 25691-25693
# (the broker lab's RabbitMQ is 5672/25672, Artemis 5673). Node 1 starts first;
# 2 and 3 join it through classic-config peer discovery. One Erlang cookie for
# the three (a shared HOME), about 256 MB of memory watermark each.
rabbitmq_ha_env=BABELQUEUE_RABBITMQ_HA_URL
rabbitmq_ha_timeout=180
rabbitmq_ha_nodes="1 2 3"
rabbitmq_ha_ports="5691 5692 5693 25691 25692 25693"
rabbitmq_ha_url() { echo "amqp://guest:guest@$HOST:5691,$HOST:5692,$HOST:5693"; }
rabbitmq_ha_install() { apt_ensure /usr/lib/rabbitmq/bin/rabbitmq-server rabbitmq-server; }

# The environment of node N and of the CLI tools that talk to it.
rabbitmq_ha_environment() {
  local d="$LAB/rabbitmq-ha" n=$1
  export HOME="$d" RABBITMQ_NODENAME="bqha$n@localhost" RABBITMQ_NODE_IP_ADDRESS="$HOST" \
    RABBITMQ_NODE_PORT="569$n" RABBITMQ_DIST_PORT="2569$n" RABBITMQ_MNESIA_BASE="$d/node$n/mnesia" \
    RABBITMQ_LOG_BASE="$d/node$n/log" RABBITMQ_PID_FILE="$d/node$n/rabbitmq.pid" \
    RABBITMQ_CONFIG_FILE="$d/node$n/rabbitmq.conf" RABBITMQ_ENABLED_PLUGINS_FILE="$d/enabled_plugins" \
    ERL_EPMD_ADDRESS="$HOST" \
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}" \
    RABBITMQ_CTL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
}

rabbitmq_ha_ctl() { local n=$1; shift; ( rabbitmq_ha_environment "$n"; /usr/lib/rabbitmq/bin/rabbitmqctl -n "bqha$n@localhost" -q "$@" ); }

# Node N's AMQP port answers and the node sees all three nodes running.
rabbitmq_ha_node_ready() {
  probe amqp091 "569$1" || return 1
  [ "$(rabbitmq_ha_ctl "$1" eval 'length(rabbit_nodes:all_running()).' 2>/dev/null)" = 3 ]
}
rabbitmq_ha_ready() {
  local n
  for n in $rabbitmq_ha_nodes; do probe amqp091 "569$n" || return 1; done
  [ "$(rabbitmq_ha_ctl 1 eval 'length(rabbit_nodes:all_running()).' 2>/dev/null)" = 3 ]
}
rabbitmq_ha_why() {
  local n
  for n in $rabbitmq_ha_nodes; do probe amqp091 "569$n" || { echo "node $n: $(probe_why amqp091 "569$n")"; return; }; done
  echo "nodes running as seen from node 1: $(rabbitmq_ha_ctl 1 eval 'rabbit_nodes:all_running().' 2>&1 | tr '\n' ' ')"
}

rabbitmq_ha_start() {
  local d="$LAB/rabbitmq-ha" n deadline
  for n in $rabbitmq_ha_nodes; do
    rm -rf "${d:?}/node$n"; mkdir -p "$d/node$n/mnesia" "$d/node$n/log"
    cat > "$d/node$n/rabbitmq.conf" <<CONF
listeners.tcp.default = $HOST:569$n
loopback_users.guest = true
vm_memory_high_watermark.absolute = 256MiB
disk_free_limit.absolute = 50MB
log.console = true
log.console.level = warning
log.file = false
cluster_formation.peer_discovery_backend = classic_config
cluster_formation.classic_config.nodes.1 = bqha1@localhost
cluster_formation.classic_config.nodes.2 = bqha2@localhost
cluster_formation.classic_config.nodes.3 = bqha3@localhost
CONF
  done
  echo '[].' > "$d/enabled_plugins"
  [ -f "$d/.erlang.cookie" ] || { head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z' > "$d/.erlang.cookie"; chmod 400 "$d/.erlang.cookie"; }
  port_busy 4369 || touch "$d/epmd-started-here"
  # Node 1 forms the cluster; 2 and 3 start once it answers, and join it.
  rabbitmq_ha_restore_node 1
  deadline=$(( $(date +%s) + rabbitmq_ha_timeout ))
  until probe amqp091 5691; do
    [ "$(date +%s)" -lt "$deadline" ] || { warn rabbitmq-ha "node 1 did not answer"; return 1; }
    [ -n "$(live_pids rabbitmq-ha)" ] || { tail -n 15 "$d/node1.log" >&2; return 1; }
    sleep 0.5
  done
  rabbitmq_ha_restore_node 2
  rabbitmq_ha_restore_node 3
}

# Node N on its existing Mnesia directory: it rejoins the cluster it belongs to.
rabbitmq_ha_restore_node() {
  local d="$LAB/rabbitmq-ha" n=$1
  [[ " $rabbitmq_ha_nodes " == *" $n "* ]] || { warn rabbitmq-ha "no node $n (nodes: $rabbitmq_ha_nodes)"; return 1; }
  ( rabbitmq_ha_environment "$n"; start_node rabbitmq-ha "$n" "$d/node$n.log" /usr/lib/rabbitmq/bin/rabbitmq-server )
}

rabbitmq_ha_kill_node() { kill_node_pids rabbitmq-ha "$1"; }

rabbitmq_ha_stop() {
  local d="$LAB/rabbitmq-ha"
  stop_pids rabbitmq-ha
  if [ -f "$d/epmd-started-here" ] && ! epmd -names 2>/dev/null | grep -q '^name '; then
    epmd -kill >/dev/null 2>&1 || true
  fi
  rm -f "$d/epmd-started-here"
}
