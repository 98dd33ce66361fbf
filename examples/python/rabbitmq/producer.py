# Three orders from Python to a BabelQueue worker over RabbitMQ (default exchange, durable queue).
# pip install "babelqueue[amqp]"
import os

from babelqueue import BabelQueue

app = BabelQueue(os.environ.get("AMQP_URL", "amqp://guest:guest@localhost:5672/%2F"), queue=os.environ.get("QUEUE", "orders"))
for order_id in (1001, 1002, 1003):
    app.publish("urn:babel:orders:created", {"order_id": order_id, "total_cents": 4200})
app.transport.close()
