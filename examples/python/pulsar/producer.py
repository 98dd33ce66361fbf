# Three orders from Python to a BabelQueue worker over Pulsar (topic persistent://public/default/<queue>).
# The Python SDK speaks the binary protocol (port 6650); the Node worker uses the WebSocket API (8080).
# pip install "babelqueue[pulsar]"
import os

from babelqueue import BabelQueue

app = BabelQueue(os.environ.get("PULSAR_URL", "pulsar://localhost:6650"), queue=os.environ.get("QUEUE", "orders"))
for order_id in (1001, 1002, 1003):
    app.publish("urn:babel:orders:created", {"order_id": order_id, "total_cents": 4200})
app.transport.close()
