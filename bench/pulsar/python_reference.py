"""Reference figure for bench/pulsar: the official Python SDK (babelqueue[pulsar],
whose pulsar-client speaks Pulsar's binary protocol) publishing COUNT messages with
app.publish (one synchronous send each) and consuming them with app.consume.

    python python_reference.py pulsar://127.0.0.1:6650 QUEUE COUNT

Prints one JSON object. Run by bench/pulsar/index.ts with the interop venv.
"""
import json
import os
import sys
import time

# pulsar-client's C++ logger writes to file descriptor 1: keep a copy of stdout
# for the one JSON answer and send fd 1 to stderr.
answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)

import pulsar
from babelqueue import BabelQueue
from babelqueue.pulsar_transport import PulsarTransport

url, queue, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
URN = "urn:babel:orders:created"
DATA = {"order_id": 1042, "sku": "ABC-123", "qty": 2, "note": "café ☕"}

app = BabelQueue(url, queue=queue, transport=PulsarTransport(url, initial_position=pulsar.InitialPosition.Earliest))
app.register(URN, lambda data, meta, envelope: None)
app.transport._consumer(queue)  # subscribe first, so nothing published is missed

start = time.perf_counter()
for _ in range(count):
    app.publish(URN, DATA)
publish_s = time.perf_counter() - start

start = time.perf_counter()
handled = app.consume(max_messages=count, timeout=10, handle_signals=False)
consume_s = time.perf_counter() - start
app.transport.close()

answer.write(json.dumps({
    "publishMsgsPerSec": round(count / publish_s),
    "consumeMsgsPerSec": round(handled / consume_s),
    "messages": count,
    "handled": handled,
}) + "\n")
answer.flush()
