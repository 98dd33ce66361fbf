# Three orders from Python to a BabelQueue worker over Redis (the SDK's default legacy layout).
# pip install "babelqueue[redis]"
import os

from babelqueue import BabelQueue

app = BabelQueue(os.environ.get("REDIS_URL", "redis://localhost:6379/0"), queue=os.environ.get("QUEUE", "orders"))
for order_id in (1001, 1002, 1003):
    app.publish("urn:babel:orders:created", {"order_id": order_id, "total_cents": 4200})
app.transport.close()
