# shellcheck shell=bash disable=SC2034  # the <id>_* variables are read by scripts/clusters
# A Redis Cluster with replicas: six redis-server nodes on 7101-7106 (bus
# 17101-17106), three masters and a replica each (`--cluster-replicas 1`),
# cluster-node-timeout 3000 ms, so a replica takes over a dead master's slots.
# Nodes are numbered by port (1 = 7101 … 6 = 7106); after a failover the
# numbers stay the ports'. No persistence: a restored node comes back empty
# on its nodes.conf and rejoins as a replica of whoever took its slots.
redis_cluster_ha_env=BABELQUEUE_REDIS_CLUSTER_HA_URL
redis_cluster_ha_timeout=90
redis_cluster_ha_nodes="1 2 3 4 5 6"
redis_cluster_ha_ports="7101 7102 7103 7104 7105 7106 17101 17102 17103 17104 17105 17106"
redis_cluster_ha_url() { echo "redis://$HOST:7101?cluster=1"; }
redis_cluster_ha_install() { apt_ensure redis-server redis-server; }

rch_cli() { local port=$1; shift; redis-cli -h "$HOST" -p "$port" "$@" 2>/dev/null | tr -d '\r'; }

# Ready: the cluster's state is ok and it has three masters with one replica each, all connected.
redis_cluster_ha_ready() {
  local n port nodes
  [ "$(rch_cli 7101 cluster info | sed -n 's/^cluster_state://p')" = ok ] || return 1
  nodes=$(rch_cli 7101 cluster nodes | grep -v fail)
  [ "$(awk '$3 ~ /master/' <<<"$nodes" | wc -l)" = 3 ] || return 1
  [ "$(grep -c ' connected' <<<"$nodes")" = 6 ] || return 1
  for n in $redis_cluster_ha_nodes; do
    port=$((7100 + n))
    [ "$(rch_cli "$port" ping)" = PONG ] || return 1
  done
}
redis_cluster_ha_why() { echo "cluster_state $(rch_cli 7101 cluster info | sed -n 's/^cluster_state://p'); $(rch_cli 7101 cluster nodes | grep -c connected) nodes connected"; }
redis_cluster_ha_node_ready() {
  local port=$((7100 + $1))
  [ "$(rch_cli "$port" ping)" = PONG ] || return 1
  [ "$(rch_cli "$port" cluster info | sed -n 's/^cluster_state://p')" = ok ] || return 1
  [ "$(rch_cli "$port" role | head -n 1)" = master ] || [ "$(rch_cli "$port" info replication | sed -n 's/^master_link_status://p')" = up ] || return 1
  redis_cluster_ha_ready
}

# A master restarted empty before its replica took its slots over would keep
# them, and its replica would resync to the empty data set: every message of
# those slots lost. So a node comes back only once no live node lists it as
# the master of any slot (the failover happened).
redis_cluster_ha_restore_node() {
  local d="$LAB/redis-cluster-ha" port=$((7100 + $1)) id other deadline
  [[ " $redis_cluster_ha_nodes " == *" $1 "* ]] || { warn redis-cluster-ha "no node $1 (nodes: $redis_cluster_ha_nodes)"; return 1; }
  id=$(awk '/myself/ {print $1}' "$d/$port/nodes.conf" 2>/dev/null)
  other=$(( port == 7101 ? 7102 : 7101 ))
  deadline=$(( $(date +%s) + redis_cluster_ha_timeout ))
  while [ -n "$id" ] && rch_cli "$other" cluster nodes | awk -v id="$id" '$1 == id && NF >= 9 {found = 1} END {exit !found}'; do
    [ "$(date +%s)" -lt "$deadline" ] || { warn redis-cluster-ha "node $1 still holds slots (no failover): not restoring it empty"; return 1; }
    sleep 0.5
  done
  mkdir -p "$d/$port"
  start_node redis-cluster-ha "$1" "$d/$port.log" redis-server --port "$port" --bind "$HOST" --dir "$d/$port" \
    --cluster-enabled yes --cluster-config-file "$d/$port/nodes.conf" --cluster-node-timeout 3000 \
    --save '' --appendonly no --maxmemory 64mb
}

redis_cluster_ha_start() {
  local d="$LAB/redis-cluster-ha" n seeds=() i
  rm -rf "${d:?}"/71*
  for n in $redis_cluster_ha_nodes; do
    redis_cluster_ha_restore_node "$n"
    seeds+=("$HOST:$((7100 + n))")
  done
  for n in $redis_cluster_ha_nodes; do
    for i in $(seq 100); do
      [ "$(rch_cli $((7100 + n)) ping)" = PONG ] && break
      sleep 0.1
    done
  done
  redis-cli --cluster create "${seeds[@]}" --cluster-replicas 1 --cluster-yes >"$d/create.log" 2>&1 \
    || { tail -n 20 "$d/create.log" >&2; return 1; }
}

# NODE: 1-6, or `master-of:<key>`: the node that serves <key>'s slot now.
redis_cluster_ha_node() {
  local slot port
  if [[ $1 == master-of:* ]]; then
    slot=$(rch_cli 7101 cluster keyslot "${1#master-of:}")
    port=$(rch_cli 7101 cluster nodes | grep -v fail | awk -v slot="$slot" '$3 ~ /master/ {
      for (i = 9; i <= NF; i++) { n = split($i, r, "-"); if (slot >= r[1] && slot <= (n > 1 ? r[2] : r[1])) { split($2, a, "[:@]"); print a[2] } } }')
    [ -n "$port" ] || return 1
    echo $((port - 7100))
  else echo "$1"; fi
}
redis_cluster_ha_kill_node() { kill_node_pids redis-cluster-ha "$(redis_cluster_ha_node "$1")"; }
