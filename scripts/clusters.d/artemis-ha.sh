# shellcheck shell=bash disable=SC2034  # the artemis_ha_* variables are read by scripts/clusters
# artemis-ha: an ActiveMQ Artemis primary/backup pair with replication (shared
# nothing) on loopback, from the same apache-artemis bin zip as the lab's
# single broker (scripts/brokers.d/artemis.sh). Node 1 is the primary (AMQP
# 15673, core 16161), node 2 its backup (AMQP 15674, core 16162): the backup
# copies every durable write of the primary before the primary acknowledges
# it, opens its acceptors only when the primary dies, and hands back to the
# primary when that comes back (fail-back). User admin/admin (anonymous
# allowed), no web console. Everything under .clusters/artemis-ha/ (node1,
# node2: the broker instance, its journal and log); instances created
# fresh on every start, kept by kill-node/restore-node.

ARTEMIS_HA_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ARTEMIS_HA_BROKERS_D="$ARTEMIS_HA_ROOT/scripts/brokers.d"
ARTEMIS_HA_CACHE="${BABELQUEUE_BROKERS_DIR:-$ARTEMIS_HA_ROOT/.brokers}/cache"
ARTEMIS_HA_DIR="${BABELQUEUE_CLUSTERS_DIR:-$ARTEMIS_HA_ROOT/.clusters}/artemis-ha"
# scripts/clusters loads lib.sh; sourced on its own (a test) this file loads it.
if ! declare -F maven_fetch >/dev/null; then
  LAB=${LAB:-$ARTEMIS_HA_DIR/..}
  # shellcheck source=../brokers.d/lib.sh
  source "$ARTEMIS_HA_BROKERS_D/lib.sh"
fi
if ! declare -F java_ensure >/dev/null; then
  # shellcheck source=../brokers.d/java.sh
  source "$ARTEMIS_HA_BROKERS_D/java.sh"
fi
if ! declare -F artemis_install >/dev/null; then
  # shellcheck source=../brokers.d/artemis.sh
  source "$ARTEMIS_HA_BROKERS_D/artemis.sh"
fi

artemis_ha_env=BABELQUEUE_ARTEMIS_HA_URL
artemis_ha_timeout=180
artemis_ha_ports="15673 15674 16161 16162"
artemis_ha_amqp_port() { echo $(( 15672 + $1 )); }   # 15673, 15674
artemis_ha_core_port() { echo $(( 16160 + $1 )); }   # 16161, 16162
# The Qpid JMS failover form ArtemisTransport reads: primary first, then backup.
artemis_ha_url() { echo "failover:(amqp://admin:admin@127.0.0.1:15673,amqp://admin:admin@127.0.0.1:15674)"; }

# Ready: the primary serves AMQP and the backup has announced a synchronized
# copy (AMQ221024) since it last served as the active broker (AMQ221007; after
# a fail-back it restarts as backup in the same process), so the primary may
# die without losing a write.
artemis_ha_ready() {
  artemis_ha_probe 1 && [ -n "$(node_pid artemis-ha 2)" ] && artemis_ha_backup_synced
}
artemis_ha_backup_synced() {
  awk '/AMQ221007/ { synced = 0 } /AMQ221024/ { synced = 1 } END { exit !synced }' "$ARTEMIS_HA_DIR/node2/artemis.log" 2>/dev/null
}
artemis_ha_why() {
  if ! artemis_ha_probe 1; then
    echo "primary: $(python3 "$ARTEMIS_HA_BROKERS_D/probe.py" amqp10 127.0.0.1 15673 2>&1 | tail -n 1)"
  else
    echo "the backup has not announced a synchronized copy (AMQ221024) yet"
  fi
}
artemis_ha_probe() { python3 "$ARTEMIS_HA_BROKERS_D/probe.py" amqp10 127.0.0.1 "$(artemis_ha_amqp_port "$1")" >/dev/null 2>&1; }

artemis_ha_install() {
  mkdir -p "$ARTEMIS_HA_CACHE"
  CACHE=$ARTEMIS_HA_CACHE HERE=$ARTEMIS_HA_BROKERS_D artemis_install
}
artemis_ha_start() {
  local home n
  artemis_ha_install || return 1
  home=$(CACHE=$ARTEMIS_HA_CACHE artemis_home)
  for n in 1 2; do artemis_ha_create "$home" "$n" || return 1; done
  artemis_ha_spawn 1
  artemis_ha_spawn 2
}

# artemis_ha_create HOME N: a fresh broker instance for node N.
artemis_ha_create() {
  local home=$1 n=$2 d="$ARTEMIS_HA_DIR/node$2" other role=()
  other=$(artemis_ha_core_port $(( 3 - n )))
  [ "$n" = 2 ] && role=(--backup)
  rm -rf "$d"; mkdir -p "$d"
  "$home/bin/artemis" create --silent --force --name "babelqueue-ha-$n" --host 127.0.0.1 \
    --user admin --password admin --allow-anonymous --no-web \
    --no-mqtt-acceptor --no-stomp-acceptor --no-hornetq-acceptor --nio --no-fsync \
    --java-memory 512M --clustered --replicated "${role[@]}" \
    --cluster-user babelqueue-cluster --cluster-password babelqueue-cluster \
    --default-port "$(artemis_ha_core_port "$n")" --staticCluster "tcp://127.0.0.1:$other" \
    "$d/instance" >"$d/create.log" 2>&1 || { tail -n 20 "$d/create.log" >&2; return 1; }
  local xml="$d/instance/etc/broker.xml"
  sed -i 's#tcp://[0-9.]*:5672?#tcp://127.0.0.1:'"$(artemis_ha_amqp_port "$n")"'?#' "$xml"
  sed -i 's/-Xms512M/-Xms64M/' "$d/instance/etc/artemis.profile"
  if [ "$n" = 2 ]; then
    # Fail-back: once the primary is back and in sync, the backup hands over
    # and restarts as backup (the default is to stay active).
    sed -i 's#<backup/>#<backup><allow-failback>true</allow-failback></backup>#' "$xml"
    grep -q '<allow-failback>true' "$xml" || { echo "artemis-ha: no <backup/> ha-policy in $xml" >&2; return 1; }
  fi
  if [ "$n" = 1 ]; then
    # A pair has no third vote: the primary stays up when its backup dies
    # (vote-on-replication-failure false), and a primary that comes back first
    # asks whether its backup took over, and if so syncs from it and takes
    # over again (check-for-active-server) instead of serving a stale journal.
    python3 - "$xml" <<'PY'
import re, sys
path = sys.argv[1]
text = open(path).read()
policy = ("<primary>\n               <vote-on-replication-failure>false</vote-on-replication-failure>\n"
          "               <check-for-active-server>true</check-for-active-server>\n            </primary>")
text, count = re.subn(r"<primary>.*?</primary>", policy, text, flags=re.S)
if count != 1:
    sys.exit("broker.xml: no <primary> ha-policy to rewrite")
open(path, "w").write(text)
PY
  fi
}

# kill-node N: SIGKILL, as a crashed machine. Killing the primary (1) makes
# the backup take over.
artemis_ha_kill_node() { kill_node_pids artemis-ha "$1"; }

# restore-node N: the node again on its journal. Back once the pair is
# whole again: the primary serving and the backup holding a synchronized copy
# (after a primary's return that is a fail-back: the backup hands over and
# restarts as backup).
artemis_ha_restore_node() {
  [ -z "$(node_pid artemis-ha "$1")" ] || { echo "artemis-ha node $1 is already running" >&2; return 1; }
  artemis_ha_spawn "$1"
}

# A fresh log for each run of a node: artemis_ha_backup_synced reads node 2's.
artemis_ha_spawn() {
  local d="$ARTEMIS_HA_DIR/node$1"
  start_node artemis-ha "$1" "$d/artemis.log" "$d/instance/bin/artemis" run
}
