# shellcheck shell=bash disable=SC2034  # the <broker>_* variables are read by scripts/brokers
# PostgreSQL (Debian's postgresql) on 55432: a throwaway cluster under
# .brokers/postgres, initialised at every start, loopback only, trust
# authentication for the superuser "babelqueue", fsync off. PostgreSQL refuses
# to run as root, so the cluster belongs to (and runs as) Debian's "postgres"
# user; the data folder is re-created each start, nothing is kept.
postgres_env=BABELQUEUE_POSTGRES_URL
postgres_ports="55432"
postgres_timeout=60
postgres_url() { echo "postgres://babelqueue@$HOST:55432/postgres"; }
postgres_ready() { probe postgres 55432; }
postgres_why() { probe_why postgres 55432; }

# The newest server binaries Debian installed (/usr/lib/postgresql/<major>/bin).
postgres_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
postgres_install() {
  local bin
  bin=$(postgres_bin)
  apt_ensure "${bin:-/usr/lib/postgresql/bin}/postgres" postgresql
}

# as_postgres COMMAND...: runs COMMAND as the unprivileged "postgres" user, in
# this process (setpriv execs, so a recorded pid is the server's own).
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }

postgres_start() {
  local d="$LAB/postgres" bin
  bin=$(postgres_bin)
  rm -rf "$d/data" "$d/socket"; mkdir -p "$d/data" "$d/socket"
  chown postgres:postgres "$d/data" "$d/socket"; chmod 700 "$d/data"
  as_postgres "$bin/initdb" -D "$d/data" -U babelqueue --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync \
    >"$d/initdb.log" 2>&1 || { tail -n 20 "$d/initdb.log" >&2; return 1; }
  spawn postgres "$d/postgres.log" setpriv --reuid=postgres --regid=postgres --init-groups \
    "$bin/postgres" -D "$d/data" -h "$HOST" -p 55432 -k "$d/socket" \
    -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 \
    -c shared_buffers=64MB
}

# SIGTERM would wait for every client to disconnect; SIGINT is the fast shutdown.
postgres_stop() {
  local pids
  pids=$(live_pids postgres)
  [ -n "$pids" ] && kill -INT $pids 2>/dev/null || true
  stop_pids postgres
}
