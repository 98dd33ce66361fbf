#!/usr/bin/env python3
"""A foreign producer for packages/pulsar/test/binary-interop.test.ts: the
official Python client (pulsar-client, the C++ library underneath) publishes
messages with a chosen compression, batched or not, over the binary protocol.

The request comes as one JSON object on stdin:

    {"serviceUrl": "pulsar://127.0.0.1:6650",
     "topic": "persistent://public/default/q",
     "compression": "NONE" | "LZ4" | "ZLIB" | "ZSTD" | "SNAPPY",
     "batching": true,            # false: one entry per message
     "messages": [{"body": "<base64>", "properties": {"k": "v"}}, ...]}

With batching, the producer holds up to len(messages) messages for up to a
minute, so all of them leave in one batch (one entry on the broker) once
flush() is called. The answer is one JSON object on stdout: the message id of
each message, in order ({"ledger", "entry", "partition", "batch_index"}).
"""
import base64
import json
import os
import sys
import threading

# The one JSON answer goes to the real stdout; everything else written to file
# descriptor 1 (the C++ client's logger writes there) goes to stderr.
_answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr

import pulsar  # noqa: E402  (after the redirect: its logger may write at import)

COMPRESSION = {
    "NONE": pulsar.CompressionType.NONE,
    "LZ4": pulsar.CompressionType.LZ4,
    "ZLIB": pulsar.CompressionType.ZLib,
    "ZSTD": pulsar.CompressionType.ZSTD,
    "SNAPPY": pulsar.CompressionType.SNAPPY,
}


def main():
    request = json.load(sys.stdin)
    messages = request["messages"]
    batching = bool(request["batching"])
    client = pulsar.Client(request["serviceUrl"], operation_timeout_seconds=30)
    try:
        producer = client.create_producer(
            request["topic"],
            compression_type=COMPRESSION[request["compression"]],
            batching_enabled=batching,
            batching_max_messages=max(1, len(messages)),
            batching_max_publish_delay_ms=60_000,
            send_timeout_millis=30_000,
        )
        done = threading.Event()
        results = [None] * len(messages)
        left = [len(messages)]
        lock = threading.Lock()

        def callback_for(index):
            def callback(result, message_id):
                with lock:
                    results[index] = (result, message_id)
                    left[0] -= 1
                    if left[0] == 0:
                        done.set()
            return callback

        for index, message in enumerate(messages):
            producer.send_async(
                base64.b64decode(message["body"]),
                callback_for(index),
                properties=message.get("properties", {}),
            )
        producer.flush()
        if not done.wait(60):
            raise SystemExit("no send receipt for every message within 60 s")
        ids = []
        for result, message_id in results:
            if result != pulsar.Result.Ok:
                raise SystemExit(f"send failed: {result}")
            ids.append({
                "ledger": message_id.ledger_id(),
                "entry": message_id.entry_id(),
                "partition": message_id.partition(),
                "batch_index": message_id.batch_index(),
            })
        producer.close()
    finally:
        client.close()
    _answer.write(json.dumps({"ids": ids}))
    _answer.flush()


if __name__ == "__main__":
    main()
