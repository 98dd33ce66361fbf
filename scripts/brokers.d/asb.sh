# shellcheck shell=bash disable=SC2034  # the <broker>_* variables are read by scripts/brokers
# The Azure Service Bus stand-in (test/support/asb-standin): no Service Bus can
# run here (Microsoft's emulator needs Docker), so an AMQP 1.0 server on rhea,
# run with the repository's own tsx, that the official Node and Python SDKs talk
# to in plain AMQP (UseDevelopmentEmulator=true) on 5680. It is not Service Bus:
# see test/support/asb-standin/README.md for what it models.
asb_env=BABELQUEUE_ASB_URL
asb_ports="5680"
asb_timeout=60
asb_no_restart="the stand-in keeps its entities in memory only, so a restart would empty them"
asb_url() { echo "Endpoint=sb://$HOST:5680;SharedAccessKeyName=standin;SharedAccessKey=standin;UseDevelopmentEmulator=true"; }
asb_ready() { probe asb 5680; }
asb_why() { probe_why asb 5680; }
asb_install() {
  [ -x "$ROOT/node_modules/.bin/tsx" ] && [ -d "$ROOT/node_modules/rhea" ] && return 0
  warn asb "the stand-in runs on the repository's tsx and rhea: run npm ci first"
  return 1
}
asb_start() {
  spawn asb "$LAB/asb/asb.log" node --import tsx "$ROOT/test/support/asb-standin/main.ts" --host "$HOST" --port 5680
}
