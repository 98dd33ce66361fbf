#!/usr/bin/env python3
"""The interop peer: produces and consumes through the official BabelQueue Python SDK.

The TypeScript interop suites (test/interop/*.test.ts) run it as a child process.
Each command prints exactly one JSON object on stdout; the SDK's own log lines go
to stderr. Bodies travel base64-encoded so that every byte survives the trip.

    peer.py version
    peer.py encode                         (request on stdin, see cmd_encode)
    peer.py publish --url URL --queue Q --urn URN --data JSON [--trace-id ID] [--headers JSON]
                                           (prints the meta.id and the body the SDK sent)
    peer.py consume --url URL --queue Q --urn URN [--urn URN ...] [--max N] [--timeout S]
                    [--fail N] [--max-attempts N] [--dead-letter] [--on-unknown-urn STRATEGY]
                    [--group KAFKA_GROUP] [--retry-tiers-ms MS,...]
    peer.py reinject --url KAFKA_URL --queue Q --retry-tiers-ms MS,... [--group G] [--count N] [--timeout S]

The URL scheme picks the SDK's transport: redis:// (RedisTransport, the SDK's
default legacy layout), amqp:// (PikaTransport), kafka:// (KafkaTransport;
consume --group names its consumer group, default "babelqueue"), pulsar://
(PulsarTransport over the binary protocol, subscription "babelqueue", Shared),
artemis://user:pass@host:port (ArtemisTransport, python-qpid-proton) or
sqs://REGION?endpoint=... (SqsTransport; credentials from the AWS environment
variables, queues created beforehand).
"""
import argparse
import base64
import json
import os
import sys
import time

import babelqueue
from babelqueue import BabelQueue, EnvelopeCodec


# The one JSON answer goes to the real stdout; everything else written to file
# descriptor 1 (pulsar-client's C++ logger writes there) is sent to stderr.
_answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr


def out(obj):
    _answer.write(json.dumps(obj, ensure_ascii=False) + "\n")
    _answer.flush()


def b64(text):
    """A received body back to its exact bytes (the SDK reads with surrogateescape)."""
    return base64.b64encode(text.encode("utf-8", "surrogateescape")).decode("ascii")


def cmd_version(_args):
    out({"babelqueue": babelqueue.__version__, "python": sys.version.split()[0]})


def cmd_encode(_args):
    """Request: {"urn", "data", "queue"?, "trace_id"?, "meta"?: {"id"?, "created_at"?, "lang"?}}.

    The envelope is built by the SDK's EnvelopeCodec.make; the per-message meta fields
    (which no two makes share) are then replaced in place by the given values, so the
    key order stays the SDK's, and the SDK's EnvelopeCodec.encode writes the bytes.
    """
    req = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    envelope = EnvelopeCodec.make(
        req["urn"], req["data"], queue=req.get("queue", "default"), trace_id=req.get("trace_id"),
    )
    for key, value in (req.get("meta") or {}).items():
        if key not in envelope["meta"]:
            raise SystemExit(f"encode: meta.{key} is not a field EnvelopeCodec.make writes")
        envelope["meta"][key] = value
    out({"body": b64(EnvelopeCodec.encode(envelope))})


def cmd_publish(args):
    app = BabelQueue(args.url, queue=args.queue)
    data = json.loads(args.data)
    # Record the body exactly as the SDK hands it to its transport.
    sent = []
    for name in ("publish", "publish_with_headers"):
        original = getattr(app.transport, name, None)
        if original is not None:
            def recording(queue, body, *rest, _original=original):
                sent.append(body)
                return _original(queue, body, *rest)
            setattr(app.transport, name, recording)
    if args.headers:
        message_id = app.publish_with_headers(args.urn, data, json.loads(args.headers), trace_id=args.trace_id)
    else:
        message_id = app.publish(args.urn, data, trace_id=args.trace_id)
    app.transport.close()
    out({"id": message_id, "body": b64(sent[0])})


def tiers(text):
    return [int(ms) for ms in text.split(",")] if text else None


def transport_for(args):
    """The SDK transport for the URL as make_transport builds it; for Kafka with the given
    consumer group and retry tiers."""
    if args.url.startswith("kafka://"):
        from babelqueue.kafka_transport import KafkaTransport

        return KafkaTransport(args.url, group_id=args.group or "babelqueue", retry_tiers_ms=tiers(args.retry_tiers_ms))
    if args.url.startswith(("pulsar://", "pulsar+ssl://")):
        import pulsar
        from babelqueue.pulsar_transport import PulsarTransport

        # pulsar-client creates a missing subscription at Latest, so a queue's first
        # consumer would miss what was published before it; start at Earliest, as the
        # TypeScript binding does by default.
        return PulsarTransport(args.url, initial_position=pulsar.InitialPosition.Earliest)
    return None


def cmd_reinject(args):
    """Runs the SDK's Kafka RetryReinjector for QUEUE's tier topics until COUNT records went
    back to the work topic or TIMEOUT seconds passed."""
    from babelqueue.kafka_retry import RetryReinjector

    reinjector = RetryReinjector(
        args.url, work_topics=[args.queue], retry_tiers_ms=tiers(args.retry_tiers_ms), group_id=args.group,
    )
    deadline = time.monotonic() + args.timeout
    moved = 0
    while moved < args.count and time.monotonic() < deadline:
        moved += reinjector.run_once(timeout=0.5)
    reinjector.close()
    out({"reinjected": moved})


def cmd_consume(args):
    app = BabelQueue(
        args.url,
        transport=transport_for(args),
        queue=args.queue,
        max_attempts=args.max_attempts,
        dead_letter=args.dead_letter,
        on_unknown_urn=args.on_unknown_urn,
    )
    handled = []
    raw = []
    failures = {"left": args.fail}

    # Record every body exactly as the transport delivered it, before the runtime sees it.
    pop = app.transport.pop

    def recording_pop(queue, timeout=1.0):
        received = pop(queue, timeout=timeout)
        if received is not None:
            raw.append({"body": b64(received.body), "headers": dict(received.headers)})
        return received

    app.transport.pop = recording_pop

    def handler(data, meta, envelope):
        handled.append({"data": data, "meta": meta, "envelope": envelope})
        if failures["left"] > 0:
            failures["left"] -= 1
            raise RuntimeError("interop peer: handler failure on purpose")

    for urn in args.urn:
        app.register(urn, handler)
    processed = app.consume(max_messages=args.max, timeout=args.timeout, handle_signals=False)
    app.transport.close()
    out({"processed": processed, "handled": handled, "received": raw})


def main(argv):
    parser = argparse.ArgumentParser(prog="peer.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("version")
    sub.add_parser("encode")
    p = sub.add_parser("publish")
    p.add_argument("--url", required=True)
    p.add_argument("--queue", required=True)
    p.add_argument("--urn", required=True)
    p.add_argument("--data", default="{}")
    p.add_argument("--trace-id")
    p.add_argument("--headers")
    c = sub.add_parser("consume")
    c.add_argument("--url", required=True)
    c.add_argument("--queue", required=True)
    c.add_argument("--urn", action="append", required=True)
    c.add_argument("--max", type=int, default=1)
    c.add_argument("--timeout", type=float, default=5.0)
    c.add_argument("--fail", type=int, default=0, help="fail this many handler calls first")
    c.add_argument("--max-attempts", type=int, default=3)
    c.add_argument("--dead-letter", action="store_true")
    c.add_argument("--on-unknown-urn", default="fail")
    c.add_argument("--group", help="Kafka consumer group (default: the SDK's)")
    c.add_argument("--retry-tiers-ms", help="Kafka retry tiers, comma-separated ms")
    r = sub.add_parser("reinject")
    r.add_argument("--url", required=True)
    r.add_argument("--queue", required=True)
    r.add_argument("--retry-tiers-ms", required=True)
    r.add_argument("--group", default="babelqueue-retry-reinject")
    r.add_argument("--count", type=int, default=1)
    r.add_argument("--timeout", type=float, default=20.0)
    args = parser.parse_args(argv)
    commands = {
        "version": cmd_version, "encode": cmd_encode, "publish": cmd_publish,
        "consume": cmd_consume, "reinject": cmd_reinject,
    }
    commands[args.command](args)


if __name__ == "__main__":
    main(sys.argv[1:])
