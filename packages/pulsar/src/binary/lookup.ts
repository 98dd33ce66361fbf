import * as cmd from './commands.js';
import { BrokerConnection, PulsarCommandError, type BrokerAddress } from './broker-connection.js';

/** Redirects followed before a lookup gives up (a cluster that keeps bouncing the topic). */
const MAX_REDIRECTS = 20;

/** A failed lookup (CommandLookupTopicResponse.Failed). */
const FAILED = 2;
const REDIRECT = 0;

/**
 * Connects to the broker that serves `topic`: a binary lookup on the service
 * URL, following redirects, then a connection to the owner (or through the
 * service URL, when it is a proxy that says so). The service URL's connection
 * is reused when it is the owner, as on a standalone broker.
 */
export async function connectToOwner(service: BrokerAddress, topic: string): Promise<BrokerConnection> {
  let connection = await BrokerConnection.open(service);
  try {
    let authoritative = false;
    for (let hop = 0; hop < MAX_REDIRECTS; hop++) {
      const answer = await connection.request((id) => cmd.lookup(topic, id, authoritative));
      if (answer.lookup === FAILED) {
        throw new PulsarCommandError(answer.error ?? 'UnknownError', `Pulsar cannot look up ${topic}: ${answer.error}: ${answer.message ?? ''}`);
      }
      const tls = service.url.startsWith('pulsar+ssl:');
      const owner = (tls ? answer.brokerServiceUrlTls : answer.brokerServiceUrl) ?? connection.url;
      const address: BrokerAddress = answer.proxyThroughServiceUrl === true
        ? { ...service, proxyToBrokerUrl: owner }
        : { ...service, url: owner };
      const redirect = answer.lookup === REDIRECT;
      if (redirect) authoritative = answer.authoritative === true;
      if (!isCurrent(address, connection)) {
        const next = await BrokerConnection.open(address);
        connection.close();
        connection = next;
      }
      if (!redirect) return connection;
    }
    throw new PulsarCommandError('ServiceNotReady', `Pulsar redirected the lookup of ${topic} more than ${MAX_REDIRECTS} times`);
  } catch (error) {
    connection.close();
    throw error;
  }
}

/** `connection` already is the one `address` names. */
function isCurrent(address: BrokerAddress, connection: BrokerConnection): boolean {
  return address.proxyToBrokerUrl === undefined && hostPort(address.url) === hostPort(connection.url);
}

function hostPort(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.hostname}:${parsed.port}`;
}

/** How many partitions `topic` has (0: not partitioned). */
export async function partitionsOf(connection: BrokerConnection, topic: string): Promise<number> {
  const answer = await connection.request((id) => cmd.partitionedMetadata(topic, id));
  if (answer.response === 1) {
    throw new PulsarCommandError(answer.error ?? 'UnknownError', `Pulsar cannot say whether ${topic} is partitioned: ${answer.error}: ${answer.message ?? ''}`);
  }
  return answer.partitions ?? 0;
}
