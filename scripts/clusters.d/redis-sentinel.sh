# shellcheck shell=bash disable=SC2034  # the <id>_* variables are read by scripts/clusters
# Redis 7 (Debian's redis-server) with Sentinel: a primary on 6391 (node 1),
# replicas on 6392 and 6393 (nodes 2, 3), three Sentinels on 26391-26393
# (`redis-server --sentinel`) watching them as master "babelqueue" with a
# quorum of 2. After a failover the node numbers stay the ports'; `primary`
# names whichever node Sentinel reports as the primary now. No persistence: a
# restored node starts empty as a replica of the current primary and resyncs.
redis_sentinel_env=BABELQUEUE_REDIS_SENTINEL_URL
redis_sentinel_timeout=60
redis_sentinel_nodes="1 2 3"
redis_sentinel_ports="6391 6392 6393 26391 26392 26393"
redis_sentinel_master=babelqueue
redis_sentinel_url() { echo "redis+sentinel://$HOST:26391,$HOST:26392,$HOST:26393/$redis_sentinel_master"; }
redis_sentinel_install() { apt_ensure redis-server redis-server; }

rs_cli() { local port=$1; shift; redis-cli -h "$HOST" -p "$port" "$@" 2>/dev/null; }
# The port of the primary as the first Sentinel that answers reports it.
redis_sentinel_primary_port() {
  local s addr
  for s in 26391 26392 26393; do
    addr=$(rs_cli "$s" sentinel get-master-addr-by-name "$redis_sentinel_master" | tail -n 1)
    [ -n "$addr" ] && { echo "$addr"; return 0; }
  done
  return 1
}
rs_info() { rs_cli "$1" info replication | tr -d '\r' | sed -n "s/^$2://p"; }

# Ready: the reported primary is a master with two replicas in sync, and every
# Sentinel sees it and the two other Sentinels.
redis_sentinel_ready() {
  local p s
  p=$(redis_sentinel_primary_port) || return 1
  [ "$(rs_info "$p" role)" = master ] && [ "$(rs_info "$p" connected_slaves)" = 2 ] || return 1
  for s in 26391 26392 26393; do
    [ "$(rs_cli "$s" sentinel get-master-addr-by-name "$redis_sentinel_master" | tail -n 1)" = "$p" ] || return 1
    [ "$(rs_cli "$s" sentinel master "$redis_sentinel_master" | grep -A1 -x num-other-sentinels | tail -n 1)" = 2 ] || return 1
  done
}
redis_sentinel_why() {
  local p
  p=$(redis_sentinel_primary_port) || { echo "no Sentinel answers with a primary"; return; }
  echo "primary $p: role $(rs_info "$p" role), $(rs_info "$p" connected_slaves) replicas"
}
redis_sentinel_node_ready() {
  local port="639$1"
  [ "$(rs_cli "$port" ping)" = PONG ] || return 1
  [ "$(rs_info "$port" role)" = master ] || [ "$(rs_info "$port" master_link_status)" = up ] || return 1
  redis_sentinel_ready
}

redis_sentinel_data_node() {
  local d="$LAB/redis-sentinel" n=$1; shift
  mkdir -p "$d/node$n"
  start_node redis-sentinel "$n" "$d/node$n.log" redis-server --port "639$n" --bind "$HOST" --dir "$d/node$n" \
    --save '' --appendonly no --maxmemory 128mb --replica-announce-ip "$HOST" "$@"
}

redis_sentinel_start() {
  local d="$LAB/redis-sentinel" n
  rm -rf "${d:?}"/node* "${d:?}"/sentinel*
  redis_sentinel_data_node 1
  redis_sentinel_data_node 2 --replicaof "$HOST" 6391
  redis_sentinel_data_node 3 --replicaof "$HOST" 6391
  for n in 1 2 3; do
    mkdir -p "$d/sentinel$n"
    cat > "$d/sentinel$n/sentinel.conf" <<CONF
port 2639$n
bind $HOST
dir $d/sentinel$n
sentinel announce-ip $HOST
sentinel monitor $redis_sentinel_master $HOST 6391 2
sentinel down-after-milliseconds $redis_sentinel_master 3000
sentinel failover-timeout $redis_sentinel_master 10000
sentinel parallel-syncs $redis_sentinel_master 2
CONF
    start_node redis-sentinel "sentinel$n" "$d/sentinel$n.log" redis-server "$d/sentinel$n/sentinel.conf" --sentinel
  done
}

# NODE: 1, 2, 3, or `primary` (the node Sentinel reports as the primary now).
redis_sentinel_node() {
  local p
  if [ "$1" = primary ]; then p=$(redis_sentinel_primary_port) || return 1; echo "${p#639}"; else echo "$1"; fi
}
redis_sentinel_kill_node() { kill_node_pids redis-sentinel "$(redis_sentinel_node "$1")"; }
# A node comes back as a replica of the current primary (Sentinel would demote
# a returning old primary anyway; starting it as a replica never lets it serve
# its empty data set as a primary meanwhile).
# A killed primary comes back only once Sentinel has promoted another node.
redis_sentinel_restore_node() {
  local p deadline=$(( $(date +%s) + redis_sentinel_timeout ))
  until p=$(redis_sentinel_primary_port) && [ "$p" != "639$1" ]; do
    [ "$(date +%s)" -lt "$deadline" ] || { warn redis-sentinel "no failover away from node $1: not restoring it"; return 1; }
    sleep 0.5
  done
  redis_sentinel_data_node "$1" --replicaof "$HOST" "$p"
}
