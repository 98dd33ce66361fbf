# shellcheck shell=bash disable=SC2034  # the <broker>_* variables are read by scripts/brokers
# ActiveMQ Artemis from Maven Central (the apache-artemis bin zip), a broker
# instance created fresh on every start (`restart` keeps it): AMQP 1.0 on 5673 (RabbitMQ has 5672),
# core protocol on 61616, user admin/admin (anonymous allowed), no web console.
# 2.40.0: the newest version whose bin zip Maven Central serves.
ARTEMIS_VERSION=2.40.0
artemis_env=BABELQUEUE_ARTEMIS_URL
artemis_ports="5673 61616"
artemis_timeout=120
artemis_url() { echo "amqp://admin:admin@$HOST:5673"; }
# What `status` prints: transportFromUrl sends amqp:// to RabbitMQ, artemis:// to Artemis.
# (.brokers/env keeps amqp://: ArtemisTransport takes both, and its readers expect it.)
artemis_shown_url() { echo "artemis://admin:admin@$HOST:5673"; }
artemis_ready() { probe amqp10 5673; }
artemis_why() { probe_why amqp10 5673; }
artemis_home() { echo "$CACHE/apache-artemis-$ARTEMIS_VERSION"; }
artemis_install() {
  local home; home=$(artemis_home)
  java_ensure || return 1
  [ -x "$home/bin/artemis" ] && return 0
  apt_ensure unzip unzip || return 1
  say install "artemis: fetching apache-artemis $ARTEMIS_VERSION (bin zip) from Maven Central"
  maven_fetch "org.apache.activemq:apache-artemis:$ARTEMIS_VERSION:zip:bin" "$CACHE/download" || return 1
  unzip -q -o "$CACHE/download/apache-artemis-$ARTEMIS_VERSION-bin.zip" -d "$CACHE"
}
artemis_start() {
  local d="$LAB/artemis" home; home=$(artemis_home)
  rm -rf "$d/instance"
  "$home/bin/artemis" create --silent --force --name babelqueue --host "$HOST" \
    --user admin --password admin --allow-anonymous --no-web \
    --no-mqtt-acceptor --no-stomp-acceptor --no-hornetq-acceptor --nio --no-fsync \
    --java-memory 512M "$d/instance" >"$d/create.log" 2>&1 || { tail -n 20 "$d/create.log" >&2; return 1; }
  sed -i 's#tcp://[0-9.]*:5672?#tcp://'"$HOST"':5673?#' "$d/instance/etc/broker.xml"
  sed -i 's/-Xms512M/-Xms64M/' "$d/instance/etc/artemis.profile"
  artemis_resume
}
# The instance as it is: its journal keeps durable messages across a restart.
artemis_resume() { spawn artemis "$LAB/artemis/artemis.log" "$LAB/artemis/instance/bin/artemis" run; }
