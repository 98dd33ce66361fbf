# shellcheck shell=bash
# Helpers shared by the broker modules of scripts/brokers (sourced, not run).
# Expects ROOT (repo root), HERE (this folder) and LAB (the .brokers folder).

HOST=127.0.0.1
CACHE="$LAB/cache"

say() { printf '%-14s %s\n' "$1" "$2"; }
warn() { printf '%-14s %s\n' "$1" "$2" >&2; }

# probe KIND PORT: the protocol-level readiness check (see probe.py).
probe() { python3 "$HERE/probe.py" "$1" "$HOST" "$2" 2>/dev/null; }
probe_why() { python3 "$HERE/probe.py" "$1" "$HOST" "$2" 2>&1 >/dev/null | tail -n 1; }
port_busy() { probe tcp "$1"; }

# render TEMPLATE OUT: copies a config template, filling in @LAB@, @DIR@ and @HOST@.
render() {
  sed -e "s#@LAB@#$LAB#g" -e "s#@DIR@#$2#g" -e "s#@HOST@#$HOST#g" "$HERE/conf/$1" > "$3"
}

# apt_ensure COMMAND PACKAGE...: installs Debian packages when COMMAND (a name
# on PATH, or a path) is missing. The image's policy-rc.d keeps the packages'
# own services from starting.
apt_ensure() {
  local cmd=$1; shift
  if [[ $cmd == */* ]]; then [ -x "$cmd" ] && return 0
  else command -v "$cmd" >/dev/null 2>&1 && return 0; fi
  say install "apt-get install $*"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-cache policy "$1" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    apt-get update -q >"$CACHE/apt-update.log" 2>&1 || { cat "$CACHE/apt-update.log" >&2; return 1; }
  fi
  apt-get install -o DPkg::Lock::Timeout=600 -y --no-install-recommends "$@" >"$CACHE/apt-install.log" 2>&1 \
    || { tail -n 20 "$CACHE/apt-install.log" >&2; return 1; }
}

# Maven runs with a mirror that sends every repository a POM names to Maven
# Central (the only one reachable here), unless the user has settings of their own.
DEPENDENCY_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.8.1
mvn_run() {
  local settings=()
  [ -f "$HOME/.m2/settings.xml" ] || settings=(-s "$HERE/maven/settings.xml")
  mvn -B -q "${settings[@]}" "$@"
}

# maven_classpath NAME: resolves the runtime dependencies of maven/NAME.pom.xml
# (downloaded once into ~/.m2) and prints a classpath file naming those jars.
maven_classpath() {
  local name=$1 pom="$HERE/maven/$1.pom.xml" out="$CACHE/$1.classpath"
  if [ -s "$out" ] && [ "$out" -nt "$pom" ] && classpath_complete "$out"; then
    echo "$out"; return 0
  fi
  say install "$name: resolving jars from Maven Central (cached in ~/.m2)" >&2
  mvn_run -f "$pom" "$DEPENDENCY_PLUGIN:build-classpath" -DincludeScope=runtime -Dmdep.outputFile="$out.tmp" \
    >"$CACHE/$name.mvn.log" 2>&1 || { tail -n 20 "$CACHE/$name.mvn.log" >&2; return 1; }
  mv "$out.tmp" "$out"
  echo "$out"
}

classpath_complete() {
  local jar
  while IFS= read -r -d : jar; do [ -f "$jar" ] || return 1; done < <(tr -d '\n' < "$1"; printf ':')
}

# maven_fetch GROUP:ARTIFACT:VERSION:TYPE[:CLASSIFIER] DIR: one artifact file into DIR.
maven_fetch() {
  mkdir -p "$2"
  mvn_run "$DEPENDENCY_PLUGIN:copy" -Dartifact="$1" -DoutputDirectory="$2" >"$CACHE/fetch.mvn.log" 2>&1 \
    || { tail -n 20 "$CACHE/fetch.mvn.log" >&2; return 1; }
}

# spawn NAME LOG COMMAND...: starts a broker process in its own session, detached
# from this shell, and records its pid. The log of the previous run (a restart's
# shutdown) is kept as LOG.prev.
spawn() {
  local name=$1 log=$2; shift 2
  if [ -f "$log" ]; then mv "$log" "$log.prev"; fi
  setsid nohup "$@" >"$log" 2>&1 < /dev/null &
  echo $! >> "$LAB/$name/pid"
}

# The pids this script started for NAME and that are still alive.
live_pids() {
  local file="$LAB/$1/pid" pid
  [ -f "$file" ] || return 0
  while read -r pid; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "$pid"; fi
  done < "$file"
}

# redis_save_and_stop NAME PORT...: SHUTDOWN SAVE on each port (an RDB snapshot
# in the node's --dir, then exit), then waits for NAME's processes to end.
redis_save_and_stop() {
  local name=$1 port; shift
  for port in "$@"; do redis-cli -h "$HOST" -p "$port" shutdown save >/dev/null 2>&1 || true; done
  stop_pids "$name"
}

# stop_pids NAME: SIGTERM (graceful shutdown in every broker here), SIGKILL after
# <name>_stop_grace seconds (default 30).
stop_pids() {
  local name=$1 pids grace
  grace=$(var "$name" stop_grace); grace=${grace:-30}
  pids=$(live_pids "$name")
  if [ -n "$pids" ]; then
    kill $pids 2>/dev/null || true
    for _ in $(seq $(( grace * 2 ))); do
      [ -z "$(live_pids "$name")" ] && break
      sleep 0.5
    done
    pids=$(live_pids "$name")
    [ -n "$pids" ] && { warn "$name" "did not stop in $grace s: SIGKILL $pids"; kill -9 $pids 2>/dev/null || true; }
  fi
  rm -f "$LAB/$name/pid"
}

# kafka_cluster_id: a fresh KRaft cluster id (16 random bytes, URL-safe base64).
# One that starts with '-' is drawn again: kafka-storage would read it as an option.
kafka_cluster_id() {
  python3 -c '
import base64, uuid
while True:
    s = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    if not s.startswith("-"):
        print(s)
        break'
}
