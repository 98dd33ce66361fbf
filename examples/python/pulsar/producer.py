# Three orders from Python to a BabelQueue worker over Pulsar (topic persistent://public/default/<queue>).
# Both speak the binary protocol (port 6650) to consume; the Node binding publishes over the web service (8080).
# pip install "babelqueue[pulsar]"
import os

from babelqueue import BabelQueue

app = BabelQueue(os.environ.get("PULSAR_URL", "pulsar://localhost:6650"), queue=os.environ.get("QUEUE", "orders"))
for order_id in (1001, 1002, 1003):
    app.publish("urn:babel:orders:created", {"order_id": order_id, "total_cents": 4200})
app.transport.close()
