import rhea, { type EventContext } from 'rhea';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { killSockets } from '../lab.js';
import type { BrokerDriver, DriverTarget } from './driver.js';

/** A lock of 5 s: a killed worker's messages come back that soon. */
const LOCK_MS = 5_000;
/**
 * A send whose outcome a cut connection lost is sent again after 10 s and half a second, not
 * after the SDK's 60 s and 30 s: with those, a copy of a message sent at the cut reached a
 * worker 69 s after the first, and two such sends in a row would hold a batch past the chaos
 * stream's 180 s stall bound (CI's asb row once stalled at 4986/5000 after its second cut).
 */
const SDK_RETRY = { timeoutInMs: 10_000, retryDelayInMs: 500 };

const endpoint = (connectionString: string) => {
  const match = /endpoint=sb:\/\/([^;/]+)/i.exec(connectionString);
  if (match === null) throw new Error('the asb driver runs against the stand-in (a connection string with Endpoint=sb://host:port)');
  const [host, port] = match[1]!.split(':');
  return { host: host!, port: Number(port ?? 5672) };
};

/** One request to the stand-in's test-only control node (`$standin`, see test/support/asb-standin/README.md). */
async function standIn(target: DriverTarget, operation: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { host, port } = endpoint(target.url);
  const connection = rhea.create_container().connect({ host, port, reconnect: false });
  connection.on('error', () => undefined);
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the stand-in did not answer ${operation}`)), 15_000);
      const receiver = connection.open_receiver({ source: { address: '$standin' }, target: { address: 'reliability-reply' } });
      const sender = connection.open_sender({ target: { address: '$standin' } });
      receiver.on('message', (context: EventContext) => {
        clearTimeout(timer);
        const status = context.message?.application_properties?.statusCode;
        if (status !== 200) reject(new Error(`$standin ${operation}: ${String(context.message?.application_properties?.statusDescription)}`));
        else resolve(context.message!.body as Record<string, unknown>);
      });
      sender.once('sendable', () => sender.send({ message_id: 'control', reply_to: 'reliability-reply', application_properties: { operation }, body }));
      connection.once('disconnected', (context: EventContext) => reject(context.error ?? new Error('disconnected')));
    });
  } finally {
    connection.close();
  }
}

const driver: BrokerDriver = {
  name: 'asb',
  lab: 'asb',
  description: `the Service Bus stand-in (not Service Bus), PeekLock, lock ${LOCK_MS / 1000} s`,
  transport: (target) => new AzureServiceBusTransport({ connectionString: target.url, lockDurationMs: LOCK_MS, logger: target.logger, clientOptions: { retryOptions: SDK_RETRY } }),
  queue: (base) => base,
  async prepare(target, queue, dlq) {
    // MaxDeliveryCount well above the App's maxAttempts: the App decides, Service Bus's own limit never fires.
    for (const name of [queue, dlq]) await standIn(target, 'configure-queue', { name, 'lock-duration-ms': LOCK_MS, 'max-delivery-count': 100 });
  },
  async leftover(target, queue) {
    const counts = await standIn(target, 'queue-counts', { name: queue });
    return Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, Number(v)]));
  },
  ports: (url) => [endpoint(url).port],
  cut: async (target) => `ss -K: ${await killSockets(endpoint(target.url).port)} connection(s) to the stand-in`,
  noRestart: 'the stand-in keeps its entities in memory only (a restart would empty them; Service Bus itself is a managed service)',
  // The stand-in has no entity delete; queues are per run and vanish with it.
  cleanup: async () => undefined,
  chaos: { workers: 3, concurrency: 8, killEveryMs: [300, 900], redeliveryMs: LOCK_MS + 3_000 },
  // Service Bus Standard's 256 KB message limit, which the stand-in enforces.
  maxBodyBytes: 250_000,
};

export default driver;
