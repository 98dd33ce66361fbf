# Three orders from Python to a BabelQueue worker over SQS. The queue must exist (the Python SDK
# creates none); credentials come from the AWS chain. ElasticMQ: sqs://us-east-1?endpoint=http://localhost:9324
# pip install "babelqueue[sqs]"
import os

from babelqueue import BabelQueue

app = BabelQueue(os.environ.get("SQS_URL", "sqs://us-east-1"), queue=os.environ.get("QUEUE", "orders"))
for order_id in (1001, 1002, 1003):
    app.publish("urn:babel:orders:created", {"order_id": order_id, "total_cents": 4200})
app.transport.close()
