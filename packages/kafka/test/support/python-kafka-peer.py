#!/usr/bin/env python3
"""The Kafka interop peer: the official BabelQueue Python SDK's Kafka transport
(babelqueue[kafka], over confluent-kafka), driven by kafka-interop.test.ts.
Prints one JSON object on stdout; the SDK's log lines go to stderr.

    publish  URL TOPIC URN DATA_JSON [KEY]
    consume  URL TOPIC URN GROUP COUNT TIMEOUT_S [--fail N] [--tiers JSON] [--max-attempts N]
    reinject URL TOPIC TIERS_JSON COUNT TIMEOUT_S
    check                                  (exits 0 when the Kafka extra is importable)
"""
import argparse
import json
import sys
import time

from babelqueue import BabelQueue


def out(obj):
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def cmd_check(_a):
    import confluent_kafka  # noqa: F401
    from babelqueue.kafka_transport import KafkaTransport  # noqa: F401
    import babelqueue
    out({"babelqueue": babelqueue.__version__, "confluent_kafka": str(confluent_kafka.version())})


def cmd_publish(a):
    from babelqueue.kafka_transport import KafkaTransport

    transport = KafkaTransport(a.url)
    app = BabelQueue(transport=transport, queue=a.topic)
    message_id = app.publish(a.urn, json.loads(a.data))
    transport._producer_().flush(10)
    transport.close()
    out({"id": message_id})


def cmd_consume(a):
    from babelqueue.kafka_transport import KafkaTransport

    tiers = json.loads(a.tiers) if a.tiers else None
    transport = KafkaTransport(a.url, group_id=a.group, retry_tiers_ms=tiers)
    app = BabelQueue(transport=transport, queue=a.topic, max_attempts=a.max_attempts)
    handled = []
    left = {"fail": a.fail}

    def handler(data, meta, envelope):
        handled.append({"id": meta["id"], "attempts": envelope["attempts"], "lang": meta["lang"], "data": data})
        if left["fail"] > 0:
            left["fail"] -= 1
            raise RuntimeError("python peer fails on purpose")

    app.register(a.urn, handler)
    deadline = time.time() + a.timeout
    while len(handled) < a.count and time.time() < deadline:
        app.consume(max_messages=1, timeout=0.5, handle_signals=False)
    transport.close()
    out({"handled": handled})


def cmd_reinject(a):
    from babelqueue.kafka_retry import RetryReinjector

    reinjector = RetryReinjector(a.url, work_topics=[a.topic], retry_tiers_ms=json.loads(a.tiers), poll_interval=0.1)
    moved = 0
    deadline = time.time() + a.timeout
    while moved < a.count and time.time() < deadline:
        moved += reinjector.run_once(0.1)
    out({"reinjected": moved})


def main(argv):
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("check")
    pub = sub.add_parser("publish")
    for name in ("url", "topic", "urn", "data"):
        pub.add_argument(name)
    con = sub.add_parser("consume")
    for name in ("url", "topic", "urn", "group"):
        con.add_argument(name)
    con.add_argument("count", type=int)
    con.add_argument("timeout", type=float)
    con.add_argument("--fail", type=int, default=0)
    con.add_argument("--tiers")
    con.add_argument("--max-attempts", type=int, default=3)
    rei = sub.add_parser("reinject")
    for name in ("url", "topic", "tiers"):
        rei.add_argument(name)
    rei.add_argument("count", type=int)
    rei.add_argument("timeout", type=float)
    a = p.parse_args(argv)
    {"check": cmd_check, "publish": cmd_publish, "consume": cmd_consume, "reinject": cmd_reinject}[a.cmd](a)


if __name__ == "__main__":
    main(sys.argv[1:])
