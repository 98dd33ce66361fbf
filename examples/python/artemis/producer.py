# Three orders from Python to a BabelQueue worker over ActiveMQ Artemis (AMQP 1.0). Start the worker
# first: its link creates the anycast queue, where a first send would make a multicast address.
# pip install "babelqueue[artemis]"
import os

from babelqueue import BabelQueue

app = BabelQueue(os.environ.get("ARTEMIS_URL", "artemis://artemis:artemis@localhost:5672"), queue=os.environ.get("QUEUE", "orders"))
for order_id in (1001, 1002, 1003):
    app.publish("urn:babel:orders:created", {"order_id": order_id, "total_cents": 4200})
app.transport.close()
