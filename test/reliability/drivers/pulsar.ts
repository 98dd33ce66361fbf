import { PulsarTransport } from '@babelqueue/pulsar';
import { killSockets } from '../lab.js';
import type { BrokerDriver, DriverTarget } from './driver.js';

const topic = (queue: string) => `persistent/public/default/${encodeURIComponent(queue)}`;

/** The `babelqueue` subscription's backlog: every message not acknowledged yet, delivered or not. */
async function backlog(target: DriverTarget, queue: string): Promise<number> {
  const res = await fetch(`${target.url}/admin/v2/${topic(queue)}/stats`);
  if (res.status === 404) return 0;
  if (!res.ok) throw new Error(`pulsar stats of ${queue}: HTTP ${res.status}`);
  const stats = (await res.json()) as { subscriptions?: Record<string, { msgBacklog?: number }> };
  return stats.subscriptions?.babelqueue?.msgBacklog ?? 0;
}

const driver: BrokerDriver = {
  name: 'pulsar',
  lab: 'pulsar',
  description: 'Pulsar 4.0 standalone over its WebSocket API, Shared subscription',
  transport: (target) => new PulsarTransport({ url: target.url, logger: target.logger, reconnect: { initialDelayMs: 100, maxDelayMs: 2000, multiplier: 2 } }),
  queue: (base) => base,
  leftover: async (target, queue) => ({ backlog: await backlog(target, queue) }),
  // The binding speaks the WebSocket API of the web service.
  ports: (url) => [Number(new URL(url).port)],
  cut: async (target) => `ss -K: ${await killSockets(Number(new URL(target.url).port))} connection(s) to the web service`,
  async cleanup(target, queues) {
    for (const queue of queues) await fetch(`${target.url}/admin/v2/${topic(queue)}?force=true`, { method: 'DELETE' }).catch(() => undefined);
  },
  chaos: { workers: 3, concurrency: 8, killEveryMs: [300, 900], redeliveryMs: 5_000 },
  // The WebSocket API carries a payload base64 in a JSON text frame, and the
  // broker's webSocketMaxTextFrameSize is 1 MiB: about 760 KB of body.
  maxBodyBytes: 600_000,
};

export default driver;
