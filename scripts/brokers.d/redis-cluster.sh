# shellcheck shell=bash disable=SC2034  # the <broker>_* variables are read by scripts/brokers
# A Redis Cluster of three masters on 7000-7002 (no replicas), for hash tags
# and CROSSSLOT; built fresh on every start. `restart` stops every node with
# SHUTDOWN SAVE and starts them again on their snapshots and nodes.conf.
redis_cluster_env=BABELQUEUE_REDIS_CLUSTER_URL
redis_cluster_nodes="7000 7001 7002"
redis_cluster_ports="7000 7001 7002 17000 17001 17002"
redis_cluster_timeout=60
redis_cluster_url() { echo "redis://$HOST:7000"; }
redis_cluster_ready() { probe redis-cluster 7000; }
redis_cluster_why() { probe_why redis-cluster 7000; }
redis_cluster_install() { apt_ensure redis-server redis-server; }
redis_cluster_start() {
  local d="$LAB/redis-cluster" port seeds=()
  for port in $redis_cluster_nodes; do
    rm -rf "${d:?}/$port"; mkdir -p "$d/$port"
    seeds+=("$HOST:$port")
  done
  redis_cluster_resume || return 1
  redis-cli --cluster create "${seeds[@]}" --cluster-yes >"$d/create.log" 2>&1 \
    || { tail -n 20 "$d/create.log" >&2; return 1; }
}
# Starts the nodes on what their folders hold and waits until each answers PING.
redis_cluster_resume() {
  local d="$LAB/redis-cluster" port i
  for port in $redis_cluster_nodes; do
    spawn redis-cluster "$d/$port/redis.log" redis-server --port "$port" --bind "$HOST" --dir "$d/$port" \
      --cluster-enabled yes --cluster-config-file "$d/$port/nodes.conf" --cluster-node-timeout 5000 \
      --save '' --appendonly no
  done
  for port in $redis_cluster_nodes; do
    for i in $(seq 100); do
      [ "$(redis-cli -h "$HOST" -p "$port" ping 2>/dev/null)" = PONG ] && break
      sleep 0.1
    done
  done
}
redis_cluster_halt() { redis_save_and_stop redis-cluster $redis_cluster_nodes; }
