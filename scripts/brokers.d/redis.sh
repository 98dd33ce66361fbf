# shellcheck shell=bash disable=SC2034  # the <broker>_* variables are read by scripts/brokers
# Redis 7 (Debian's redis-server), standalone on 6379. Nothing is persisted
# while it runs; `restart` saves an RDB snapshot on the way down (SHUTDOWN
# SAVE, what a Redis with persistence does on a graceful restart) and loads it.
redis_env=BABELQUEUE_REDIS_URL
redis_ports="6379"
redis_timeout=30
redis_url() { echo "redis://$HOST:6379"; }
redis_ready() { probe redis 6379; }
redis_why() { probe_why redis 6379; }
redis_install() { apt_ensure redis-server redis-server; }
redis_start() {
  rm -f "$LAB/redis/dump.rdb"
  redis_resume
}
redis_resume() {
  local d="$LAB/redis"
  spawn redis "$d/redis.log" redis-server --port 6379 --bind "$HOST" --dir "$d" \
    --save '' --appendonly no
}
redis_halt() { redis_save_and_stop redis 6379; }
