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
    peer.py differential                   (request on stdin, see cmd_differential: several
                                           consumers at once, one per row, each handler run's
                                           counted attempt and the error-level log lines)
    peer.py differential-shutdown          (one row whose handler hangs; SIGTERM mid-handler)
    peer.py reinject --url KAFKA_URL --queue Q --retry-tiers-ms MS,... [--group G] [--count N] [--timeout S]
    peer.py otel-publish --url URL --queue Q --urn URN --data JSON
                                           (babelqueue.otel.publish under an in-memory OTel SDK;
                                           prints the id, body, headers sent and the finished spans)
    peer.py otel-consume --url URL --queue Q --urn URN [--max N] [--timeout S] [--group G]
                                           (handler wrapped by babelqueue.otel.wrap_handler; prints spans)
    peer.py redrive --url URL --queue Q --dlq DLQ   (record on stdin, base64: decoded with
                                           EnvelopeCodec.decode; then babelqueue.redrive dry run
                                           and real run of DLQ; prints the decoded record and both results)
    peer.py gdpr protect|unprotect         (request on stdin: {"key": base64, "schema", "data"};
                                           babelqueue.gdpr with the reference AES-GCM cipher)

The URL scheme picks the SDK's transport: redis:// (RedisTransport, the SDK's
default legacy layout), amqp:// (PikaTransport), kafka:// (KafkaTransport;
consume --group names its consumer group, default "babelqueue"), pulsar://
(PulsarTransport over the binary protocol, subscription "babelqueue", Shared),
artemis://user:pass@host:port (ArtemisTransport, python-qpid-proton) or
sqs://REGION?endpoint=... (SqsTransport; credentials from the AWS environment
variables, queues created beforehand). A Service Bus connection string
(Endpoint=sb://...) is handed to the SDK the way it reads one for a URL:
BabelQueue("sb://") with AZURE_SERVICEBUS_CONNECTION_STRING set (AsbTransport
over azure-servicebus). consume then also reports each delivery's native
Service Bus fields (see native_fields).
"""
import argparse
import base64
import json
import logging
import os
import sys
import threading
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


def sdk_url(url):
    """The URL the SDK is given: a Service Bus connection string becomes "sb://" plus
    AZURE_SERVICEBUS_CONNECTION_STRING, which is how the SDK's AsbTransport reads one;
    every other URL is passed as it is."""
    if url.lower().startswith("endpoint="):
        os.environ["AZURE_SERVICEBUS_CONNECTION_STRING"] = url
        return "sb://"
    return url


def native_fields(message):
    """A Service Bus delivery's native fields as azure-servicebus surfaces them: the
    properties the binding projects, the application properties with the Python type
    each value arrived as, and the raw delivery_count."""
    props = {}
    for key, value in (message.application_properties or {}).items():
        name = key.decode("utf-8") if isinstance(key, bytes) else key
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        props[name] = {"value": value, "type": type(value).__name__}
    return {
        "subject": message.subject,
        "correlation_id": message.correlation_id,
        "message_id": message.message_id,
        "content_type": message.content_type,
        "application_properties": props,
        "delivery_count": message.delivery_count,
    }


def cmd_publish(args):
    app = BabelQueue(sdk_url(args.url), queue=args.queue)
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
    consumer group and retry tiers. A redis:// URL with laravel=1 is the zset layout: the
    SDK reads the flag from its URL but hands the whole URL to redis-py, which refuses the
    unknown parameter, so the transport is built with laravel_compat and the bare URL."""
    if args.url.startswith(("redis://", "rediss://")) and "laravel=1" in args.url:
        from babelqueue.redis_transport import RedisTransport

        return RedisTransport(args.url.split("?")[0], laravel_compat=True)
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
        sdk_url(args.url),
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
            entry = {"body": b64(received.body), "headers": dict(received.headers)}
            if type(received.handle).__name__ == "ServiceBusReceivedMessage":
                entry["native"] = native_fields(received.handle)
            raw.append(entry)
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


class _RowErrors(logging.Handler):
    """Counts the SDK's error-level log lines per differential row (the row is the thread's name)."""

    def __init__(self):
        super().__init__(level=logging.ERROR)
        self.by_row = {}

    def emit(self, record):
        if record.name.startswith("babelqueue"):
            row = threading.current_thread().name
            self.by_row.setdefault(row, []).append(record.getMessage()[:200])


class UnrecoverableError(Exception):
    """The "do not retry" signal of a differential row's handler. The Python SDK has no such
    signal (babelqueue 1.24.0 retries every exception), so this is an ordinary exception that
    carries the name BabelQueue for TypeScript gives its own."""


def _differential_app(url, row):
    """The SDK app for one differential row, with the row's settings, and the list the delay of
    each retry or release is recorded in (see _record_delays)."""
    args = argparse.Namespace(url=url, group=row.get("group"), retry_tiers_ms=row.get("retry_tiers_ms"))
    app = BabelQueue(
        sdk_url(url),
        transport=transport_for(args),
        queue=row["queue"],
        max_attempts=row["max_attempts"],
        dead_letter=row["dead_letter"],
        dead_letter_queue=row.get("dead_letter_queue"),
        dead_letter_suffix=row.get("dead_letter_suffix"),
        on_unknown_urn=row["on_unknown_urn"],
        retry_backoff=row.get("retry_backoff_ms", 0) / 1000,
        retry_backoff_multiplier=row.get("retry_backoff_multiplier", 1.0),
        retry_backoff_max=row.get("retry_backoff_max_ms", 0) / 1000,
        unknown_urn_release_delay=row.get("unknown_urn_release_delay_ms", 0) / 1000,
        shutdown_timeout=row.get("shutdown_timeout_ms", 30000) / 1000,
    )
    return app, _record_delays(app)


def _record_delays(app):
    """Records, for each retry or unknown-URN release, the delay in ms the copy is held for:
    the delay the runtime passes on where the transport holds it natively (SQS visibility, the
    Redis zset ``:delayed`` set); 0 where the transport re-publishes at once (the SDK's
    documented behaviour on every other transport, and Redis legacy ignores it). A shutdown
    release (the stop flag set) is not a retry and is not recorded."""
    delays = []
    release = app._release
    transport = app.transport
    holds = type(transport).__name__ == "SqsTransport" or bool(getattr(transport, "_laravel_compat", False))

    def recording(received, body, delay):
        if not app._stop.is_set():
            delays.append(round(delay * 1000) if holds else 0)
        return release(received, body, delay)

    app._release = recording
    return delays


def _differential_handler(row, runs, on_hang=None):
    def handler(data, meta, envelope):
        runs.append(int(envelope.get("attempts") or 0) + 1)
        mode = row["handler"]
        if mode == "unrecoverable":
            raise UnrecoverableError("differential: handler failure on purpose")
        if mode == "fail-always" or (mode == "fail-once" and len(runs) == 1) or (mode == "fail-thrice" and len(runs) <= 3):
            raise RuntimeError("differential: handler failure on purpose")
        if mode == "slow-once" and len(runs) == 1:
            time.sleep(row["slow_run_ms"] / 1000)
        if mode == "hang":
            on_hang()
            time.sleep(15)

    return handler


def _differential_row(url, row, errors, results):
    """One row of test/differential: a consumer on the row's queue with the row's settings and
    handler (see test/differential/support/table.ts), consuming until idle."""
    app, delays = _differential_app(url, row)
    runs = []
    app.register(row["urn"], _differential_handler(row, runs))
    stop = threading.Event()
    reinjector = None
    if row.get("reinject"):
        # Kafka with tiers: the SDK's re-inject consumer moves due retries back to the work
        # topic; it runs in its own process in production, here beside the row's consumer.
        from babelqueue.kafka_retry import RetryReinjector

        def reinject():
            mover = RetryReinjector(
                url, work_topics=[row["queue"]], retry_tiers_ms=tiers(row["retry_tiers_ms"]),
                group_id=row["queue"] + ".reinject",
            )
            while not stop.is_set():
                mover.run_once(timeout=0.5)
            mover.close()

        reinjector = threading.Thread(target=reinject, name=row["id"])
        reinjector.start()
    try:
        app.consume(max_messages=row.get("max", 20), timeout=row.get("idle_s", 2.0), handle_signals=False)
        results[row["id"]] = {"runs": runs, "delays": delays, "errors": errors.by_row.get(row["id"], [])}
    except Exception as exc:  # reported, not raised: the other rows still answer
        results[row["id"]] = {"runs": runs, "delays": delays, "errors": errors.by_row.get(row["id"], []), "crash": repr(exc)}
    finally:
        stop.set()
        if reinjector is not None:
            reinjector.join()
        app.transport.close()


def cmd_differential(_args):
    """Request: {"url", "rows": [{"id", "queue", "urn", "handler", "max_attempts", "dead_letter",
    "dead_letter_queue"?, "dead_letter_suffix"?, "on_unknown_urn", "retry_backoff_ms"?,
    "retry_backoff_multiplier"?, "retry_backoff_max_ms"?, "unknown_urn_release_delay_ms"?,
    "slow_run_ms"?, "max"?, "idle_s"?, "group"?, "retry_tiers_ms"?, "reinject"?}]} (reinject: run
    the Kafka re-inject consumer beside). Every row consumes on its own thread, at once; the
    answer is {"rows": {id: {"runs": [counted attempt per handler run], "delays": [ms per retry
    or release], "errors": [error-level lines]}}}."""
    req = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    errors = _RowErrors()
    logging.getLogger("babelqueue").addHandler(errors)
    results = {}
    threads = [
        threading.Thread(target=_differential_row, name=row["id"], args=(req["url"], row, errors, results))
        for row in req["rows"]
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out({"rows": results})


def cmd_differential_shutdown(_args):
    """Request: {"url", "row"} with a row as for cmd_differential whose handler is "hang": the
    consumer runs on the main thread with the SDK's signal handling, the handler sends the
    process SIGTERM and sleeps, and the SDK's graceful shutdown (``shutdown_timeout_ms``) decides
    what happens to the message. The answer is cmd_differential's for that one row."""
    import signal

    req = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    row = req["row"]
    threading.current_thread().name = row["id"]
    errors = _RowErrors()
    logging.getLogger("babelqueue").addHandler(errors)
    app, delays = _differential_app(req["url"], row)
    runs = []
    app.register(row["urn"], _differential_handler(row, runs, on_hang=lambda: os.kill(os.getpid(), signal.SIGTERM)))
    answer = {"runs": runs, "delays": delays}
    try:
        app.consume(max_messages=row.get("max", 20), timeout=row.get("idle_s", 2.0), handle_signals=True)
    except Exception as exc:  # noqa: BLE001 - reported
        answer["crash"] = repr(exc)
    try:
        app.transport.close()  # the SDK already closed it after the signal; a second close may refuse
    except Exception:  # noqa: BLE001
        pass
    answer["errors"] = errors.by_row.get(row["id"], [])
    out({"rows": {row["id"]: answer}})


def otel_lab():
    """A tracer whose spans stay in memory (the OpenTelemetry SDK's own exporter)."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("babelqueue-interop-peer"), exporter


def span_json(span):
    ctx = span.get_span_context()
    parent = span.parent
    return {
        "name": span.name,
        "kind": span.kind.name,
        "trace_id": format(ctx.trace_id, "032x"),
        "span_id": format(ctx.span_id, "016x"),
        "parent_trace_id": format(parent.trace_id, "032x") if parent else None,
        "parent_span_id": format(parent.span_id, "016x") if parent else None,
        "parent_remote": parent.is_remote if parent else None,
        "attributes": dict(span.attributes or {}),
    }


def cmd_otel_publish(args):
    from babelqueue import otel

    tracer, exporter = otel_lab()
    app = BabelQueue(args.url, queue=args.queue)
    sent = []
    for name in ("publish", "publish_with_headers"):
        original = getattr(app.transport, name, None)
        if original is not None:
            def recording(queue, body, *rest, _original=original):
                sent.append({"body": b64(body), "headers": dict(rest[0]) if rest else {}})
                return _original(queue, body, *rest)
            setattr(app.transport, name, recording)
    message_id = otel.publish(tracer, app, args.urn, json.loads(args.data), queue=args.queue)
    app.transport.close()
    out({"id": message_id, "sent": sent[0], "spans": [span_json(s) for s in exporter.get_finished_spans()]})


def cmd_otel_consume(args):
    from babelqueue import otel

    tracer, exporter = otel_lab()
    app = BabelQueue(args.url, transport=transport_for(args), queue=args.queue)
    received = []
    pop = app.transport.pop

    def recording_pop(queue, timeout=1.0):
        got = pop(queue, timeout=timeout)
        if got is not None:
            received.append({"body": b64(got.body), "headers": dict(got.headers)})
        return got

    app.transport.pop = recording_pop
    for urn in args.urn:
        app.register(urn, otel.wrap_handler(tracer, lambda data, meta: None))
    processed = app.consume(max_messages=args.max, timeout=args.timeout, handle_signals=False)
    app.transport.close()
    out({"processed": processed, "received": received, "spans": [span_json(s) for s in exporter.get_finished_spans()]})


class AesGcmCipher:
    """The reference cipher layout (ADR-0030): base64(12-byte nonce || ciphertext || 16-byte tag)."""

    def __init__(self, key):
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        self._aead = AESGCM(key)

    def encrypt(self, plaintext):
        import os

        nonce = os.urandom(12)
        return base64.b64encode(nonce + self._aead.encrypt(nonce, plaintext, None)).decode("ascii")

    def decrypt(self, ciphertext):
        raw = base64.b64decode(ciphertext, validate=True)
        return self._aead.decrypt(raw[:12], raw[12:], None)


def cmd_gdpr(args):
    from babelqueue import gdpr

    req = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    cipher = AesGcmCipher(base64.b64decode(req["key"]))
    data = req["data"]
    try:
        (gdpr.protect if args.action == "protect" else gdpr.unprotect)(data, req["schema"], cipher)
    except Exception as exc:  # reported to the caller, which asserts on the type
        out({"error": type(exc).__name__, "message": str(exc)})
        return
    out({"data": data})


def cmd_redrive(args):
    """Reads a DLQ record as the SDK does (EnvelopeCodec.decode of the stdin bytes), then
    redrives DLQ with the SDK's redrive: a dry run (reads and restores every record), then
    the real run. Prints the decoded record and each run's items."""
    from dataclasses import asdict

    from babelqueue.redrive import redrive

    decoded = EnvelopeCodec.decode(base64.b64decode(sys.stdin.read()).decode("utf-8"))
    app = BabelQueue(sdk_url(args.url), transport=transport_for(args), queue=args.queue)
    dry = redrive(app.transport, args.dlq, dry_run=True)
    real = redrive(app.transport, args.dlq)
    app.transport.close()
    out({
        "decoded": decoded,
        "dry_run": [asdict(item) for item in dry.items],
        "redriven": real.redriven,
        "items": [asdict(item) for item in real.items],
    })


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
    op = sub.add_parser("otel-publish")
    op.add_argument("--url", required=True)
    op.add_argument("--queue", required=True)
    op.add_argument("--urn", required=True)
    op.add_argument("--data", default="{}")
    oc = sub.add_parser("otel-consume")
    oc.add_argument("--url", required=True)
    oc.add_argument("--queue", required=True)
    oc.add_argument("--urn", action="append", required=True)
    oc.add_argument("--max", type=int, default=1)
    oc.add_argument("--timeout", type=float, default=5.0)
    oc.add_argument("--group", help="Kafka consumer group (default: the SDK's)")
    oc.add_argument("--retry-tiers-ms", help="Kafka retry tiers, comma-separated ms")
    sub.add_parser("differential")
    sub.add_parser("differential-shutdown")
    rd = sub.add_parser("redrive")
    rd.add_argument("--url", required=True)
    rd.add_argument("--queue", required=True)
    rd.add_argument("--dlq", required=True)
    rd.add_argument("--group", help="Kafka consumer group (default: the SDK's)")
    rd.add_argument("--retry-tiers-ms", help="Kafka retry tiers, comma-separated ms")
    g = sub.add_parser("gdpr")
    g.add_argument("action", choices=["protect", "unprotect"])
    args = parser.parse_args(argv)
    commands = {
        "version": cmd_version, "encode": cmd_encode, "publish": cmd_publish,
        "consume": cmd_consume, "reinject": cmd_reinject,
        "otel-publish": cmd_otel_publish, "otel-consume": cmd_otel_consume, "gdpr": cmd_gdpr,
        "differential": cmd_differential, "redrive": cmd_redrive,
        "differential-shutdown": cmd_differential_shutdown,
    }
    commands[args.command](args)


if __name__ == "__main__":
    main(sys.argv[1:])
