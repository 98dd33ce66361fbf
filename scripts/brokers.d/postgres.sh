# shellcheck shell=bash disable=SC2034  # the <broker>_* variables are read by scripts/brokers
# PostgreSQL (Debian's postgresql) on 55432: a throwaway cluster under
# .brokers/postgres/cluster, initialised at every start, loopback only, trust
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

# postgres_home DIR: where the cluster lives. Under DIR when the postgres user
# can reach it; a checkout under a private folder (a root-only home) cannot be
# reached, and then the cluster goes to a fresh folder under /tmp, named in
# DIR/home so that the next start removes it.
postgres_home() {
  local d=$1 home
  [ -f "$d/home" ] && rm -rf "$(cat "$d/home")" && rm -f "$d/home"
  rm -rf "$d/cluster"; mkdir -p "$d/cluster"; chown postgres:postgres "$d/cluster"
  if as_postgres test -w "$d/cluster"; then echo "$d/cluster"; return; fi
  home=$(mktemp -d /tmp/babelqueue-postgres.XXXXXX)
  chown postgres:postgres "$home"; chmod 700 "$home"
  echo "$home" > "$d/home"
  echo "$home"
}

postgres_start() {
  local d="$LAB/postgres" bin home
  bin=$(postgres_bin)
  home=$(postgres_home "$d")
  as_postgres mkdir -m 700 "$home/data" "$home/socket"
  as_postgres "$bin/initdb" -D "$home/data" -U babelqueue --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync \
    >"$d/initdb.log" 2>&1 || { tail -n 20 "$d/initdb.log" >&2; return 1; }
  spawn postgres "$d/postgres.log" setpriv --reuid=postgres --regid=postgres --init-groups \
    "$bin/postgres" -D "$home/data" -h "$HOST" -p 55432 -k "$home/socket" \
    -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 \
    -c shared_buffers=64MB
}

# SIGTERM would wait for every client to disconnect; SIGINT is the fast shutdown.
postgres_stop() {
  local pids
  pids=$(live_pids postgres)
  [ -n "$pids" ] && kill -INT $pids 2>/dev/null || true
  stop_pids postgres
  if [ -f "$LAB/postgres/home" ]; then rm -rf "$(cat "$LAB/postgres/home")"; rm -f "$LAB/postgres/home"; fi
}
