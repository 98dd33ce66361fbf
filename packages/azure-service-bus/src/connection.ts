import { ServiceBusClient, type ServiceBusSender, type TokenCredential } from '@azure/service-bus';
import { ConfigurationError } from '@babelqueue/core';
import { BROKER, TransportClosedError } from './errors.js';
import type { AzureServiceBusTransportOptions } from './options.js';
import type { AsbAddress } from './url.js';

/** How long `close()` waits for the SDK to close its links before giving up (a dead broker must not hang it). */
const CLOSE_BOUND_MS = 5_000;

/**
 * The one `ServiceBusClient` of a transport (AMQP connection, CBS, retries and
 * reconnection are the SDK's) and a sender per queue, opened on first use.
 */
export class Connection {
  private client: Promise<ServiceBusClient> | undefined;
  private readonly senders = new Map<string, ServiceBusSender>();
  private closed = false;

  constructor(
    private readonly address: AsbAddress | undefined,
    private readonly options: Pick<AzureServiceBusTransportOptions, 'client' | 'clientOptions' | 'credential' | 'fullyQualifiedNamespace'>,
  ) {}

  /** The client, created on first use. */
  get(): Promise<ServiceBusClient> {
    if (this.closed) return Promise.reject(new TransportClosedError(BROKER));
    this.client ??= this.create();
    return this.client;
  }

  async sender(queue: string): Promise<ServiceBusSender> {
    const client = await this.get();
    let sender = this.senders.get(queue);
    if (sender === undefined || sender.isClosed) {
      sender = client.createSender(queue);
      this.senders.set(queue, sender);
    }
    return sender;
  }

  /** Closes the senders and the client (unless the user owns it); bounded, idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const client = this.client;
    const work = (async () => {
      await Promise.allSettled([...this.senders.values()].map((s) => s.close()));
      if (client !== undefined && this.options.client === undefined) await (await client).close();
    })().catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([work, new Promise<void>((resolve) => { timer = setTimeout(resolve, CLOSE_BOUND_MS); timer.unref(); })]);
    clearTimeout(timer);
  }

  private async create(): Promise<ServiceBusClient> {
    if (this.options.client !== undefined) return this.options.client;
    const address = this.address;
    if (address?.kind === 'connection-string') return new ServiceBusClient(address.connectionString, this.options.clientOptions);
    const namespace = address?.fullyQualifiedNamespace ?? this.options.fullyQualifiedNamespace;
    if (namespace === undefined) throw new ConfigurationError('give a connectionString, a url, a fullyQualifiedNamespace with a credential, or a client');
    return new ServiceBusClient(namespace, this.options.credential ?? (await defaultCredential()), this.options.clientOptions);
  }
}

/** `@azure/identity`'s DefaultAzureCredential, when the user installed it (the Python SDK's default). */
async function defaultCredential(): Promise<TokenCredential> {
  const name = '@azure/identity';
  let identity: { DefaultAzureCredential?: new () => TokenCredential };
  try {
    identity = (await import(name)) as typeof identity;
  } catch (cause) {
    throw new ConfigurationError('a namespace URL without a key needs a token credential: pass { credential }, or npm install @azure/identity for DefaultAzureCredential', { cause });
  }
  if (identity.DefaultAzureCredential === undefined) throw new ConfigurationError('@azure/identity has no DefaultAzureCredential');
  return new identity.DefaultAzureCredential();
}
