import { ConfigurationError } from '../runtime/errors.js';
import { InMemoryTransport } from './memory/in-memory-transport.js';
import { MemoryBroker } from './memory/memory-broker.js';
import type { Transport } from './transport.js';

/**
 * Builds a transport from a URL, given as written: a binding parses it itself,
 * since some forms are not WHATWG URLs (`kafka://h1:9092,h2:9092`).
 */
export type TransportFactory = (url: string) => Transport | Promise<Transport>;

/** The package that provides each scheme this repository ships, loaded on first use. */
const PACKAGES: Readonly<Record<string, string>> = {
  'redis:': '@babelqueue/redis',
  'rediss:': '@babelqueue/redis',
  'redis+sentinel:': '@babelqueue/redis',
  'amqp:': '@babelqueue/rabbitmq',
  'amqps:': '@babelqueue/rabbitmq',
  'kafka:': '@babelqueue/kafka',
  'sqs:': '@babelqueue/sqs',
  'pulsar:': '@babelqueue/pulsar',
  'pulsar+ssl:': '@babelqueue/pulsar',
  'artemis:': '@babelqueue/artemis',
  'artemis+ssl:': '@babelqueue/artemis',
  'sb:': '@babelqueue/azure-service-bus',
  'servicebus:': '@babelqueue/azure-service-bus',
  'azureservicebus:': '@babelqueue/azure-service-bus',
};

/** `memory://<name>` transports of one process share the broker named by the host part. */
const memoryBrokers = new Map<string, MemoryBroker>();

const factories = new Map<string, TransportFactory>([
  ['memory:', (url) => {
    const name = new URL(url).host;
    let broker = memoryBrokers.get(name);
    if (broker === undefined) {
      broker = new MemoryBroker();
      memoryBrokers.set(name, broker);
    }
    return new InMemoryTransport({ broker });
  }],
]);

/** Makes `scheme` (`"redis"` or `"redis:"`) build transports with `factory`. A binding package calls this. */
export function registerTransport(scheme: string, factory: TransportFactory): void {
  factories.set(normalise(scheme), factory);
}

/**
 * A transport for a URL such as `memory://`, `redis://127.0.0.1:6379` or
 * `amqp://user:pass@host/vhost`. A scheme's binding package is imported on
 * first use (it must be installed); it exports `transportFromUrl(url: URL)`.
 */
export async function transportFromUrl(url: string | URL): Promise<Transport> {
  const raw = typeof url === 'string' ? url : url.href;
  const scheme = schemeOf(raw);
  const found = factories.get(scheme);
  if (found) return found(raw);
  const name = PACKAGES[scheme];
  if (name === undefined) {
    throw new ConfigurationError(`no transport is known for "${scheme}//" (${maskUrl(raw)}); known: memory, ${Object.keys(PACKAGES).map((s) => s.slice(0, -1)).join(', ')}`);
  }
  let module: { transportFromUrl?: TransportFactory };
  try {
    module = (await import(name)) as { transportFromUrl?: TransportFactory };
  } catch (cause) {
    throw new ConfigurationError(`"${scheme}//" needs the ${name} package: npm install ${name}`, { cause });
  }
  if (typeof module.transportFromUrl !== 'function') {
    throw new ConfigurationError(`${name} does not export transportFromUrl; is it a BabelQueue binding?`);
  }
  registerTransport(scheme, module.transportFromUrl);
  return module.transportFromUrl(raw);
}

/** The URL with its password (and a user-info token) replaced by `***`, for error messages and logs. */
export function maskUrl(url: string | URL): string {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : new URL(url.href);
  } catch {
    return '<unparseable URL>';
  }
  if (parsed.password !== '') parsed.password = '***';
  else if (parsed.username !== '') parsed.username = '***';
  return parsed.href;
}

function schemeOf(url: string): string {
  const match = /^([a-z][a-z0-9+.-]*:)\/\//i.exec(url);
  if (match === null) {
    throw new ConfigurationError(`not a transport URL: "${url.replace(/\/\/[^@/]*@/, '//***@')}" (expected e.g. memory:// or redis://127.0.0.1:6379)`);
  }
  return (match[1] as string).toLowerCase();
}

function normalise(scheme: string): string {
  return scheme.endsWith(':') ? scheme : `${scheme}:`;
}
