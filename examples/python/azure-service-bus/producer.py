# Three orders from Python to a BabelQueue worker over Azure Service Bus. "sb://" makes the SDK
# read the connection string from AZURE_SERVICEBUS_CONNECTION_STRING (Endpoint=sb://…;SharedAccessKey…).
# pip install "babelqueue[azureservicebus]"
import os

from babelqueue import BabelQueue

app = BabelQueue("sb://", queue=os.environ.get("QUEUE", "orders"))
for order_id in (1001, 1002, 1003):
    app.publish("urn:babel:orders:created", {"order_id": order_id, "total_cents": 4200})
app.transport.close()
