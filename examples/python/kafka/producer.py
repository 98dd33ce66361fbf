# Three orders from Python to a BabelQueue worker over Kafka (the topic is the queue name).
# pip install "babelqueue[kafka]"
import os

from babelqueue import BabelQueue

app = BabelQueue(os.environ.get("KAFKA_URL", "kafka://localhost:9092"), queue=os.environ.get("QUEUE", "orders"))
for order_id in (1001, 1002, 1003):
    app.publish("urn:babel:orders:created", {"order_id": order_id, "total_cents": 4200})
app.transport.close()
