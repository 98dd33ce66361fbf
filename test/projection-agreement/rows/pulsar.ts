import WebSocket from 'ws';
import { silentLogger } from '@babelqueue/core';
import { projectPulsar } from '@babelqueue/core/binding';
import { PulsarProperty, PulsarTransport } from '@babelqueue/pulsar';
import { broker, uniqueQueue } from '../../support/brokers.js';
import { until, within } from '../../support/until.js';
import { bodySays } from '../expected.js';
import type { AgreementLab, AgreementRow, NativeRecord, ProduceOptions } from '../row.js';

const suite = broker('pulsar');
const CONTRACT: readonly string[] = Object.values(PulsarProperty);
const SUBSCRIPTION = 'babelqueue';
const path = (topic: string) => `persistent/public/default/${encodeURIComponent(topic)}`;

function split(properties: Record<string, string>): Pick<NativeRecord, 'contract' | 'riders'> {
  const contract: Record<string, unknown> = {};
  const riders: Record<string, string> = {};
  for (const [key, value] of Object.entries(properties)) {
    if (CONTRACT.includes(key)) contract[key] = value;
    else riders[key] = value;
  }
  return { contract, riders };
}

/**
 * Pulsar through its own APIs, no BabelQueue code: the WebSocket producer to
 * write as a foreign producer would, and the admin API's peek of the
 * subscription's backlog to read a record without acknowledging it (the retry
 * copy stays for the next consume).
 */
class PulsarLab implements AgreementLab {
  private readonly topics: string[] = [];

  constructor(private readonly url: string) {}

  async queue(prefix: string): Promise<string> {
    const topic = uniqueQueue(`bq-agree-${prefix}`);
    for (const name of [topic, `${topic}.dlq`]) {
      this.topics.push(name);
      const res = await fetch(`${this.url}/admin/v2/${path(name)}/subscription/${SUBSCRIPTION}`, {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ ledgerId: -1, entryId: -1, partitionIndex: -1 }),
      });
      if (res.status !== 204 && res.status !== 409) throw new Error(`subscription on ${name}: HTTP ${res.status}`);
    }
    return topic;
  }

  transport(): PulsarTransport {
    return new PulsarTransport({ url: this.url, logger: silentLogger });
  }

  async produce(topic: string, body: Buffer, options: ProduceOptions = {}): Promise<void> {
    const properties = projectPulsar(bodySays(options.claims ?? body), options.riders);
    if (options.schemaVersion !== undefined) properties['bq-schema-version'] = options.schemaVersion;
    const ws = new WebSocket(`${this.url.replace(/^http/, 'ws')}/ws/v2/producer/${path(topic)}`);
    try {
      await within(new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      }), 20_000, `a producer on ${topic}`);
      const receipt = within(new Promise<{ result?: string }>((resolve) => ws.once('message', (data) => resolve(JSON.parse(data.toString()) as { result?: string }))), 20_000, 'the send receipt');
      ws.send(JSON.stringify({ payload: body.toString('base64'), properties, context: '1' }));
      const ack = await receipt;
      if (ack.result !== 'ok') throw new Error(`publish to ${topic} refused: ${JSON.stringify(ack)}`);
    } finally {
      ws.close();
    }
  }

  /** The one message left in the backlog once the original was acknowledged: the copy. */
  async readRetry(topic: string): Promise<NativeRecord> {
    await until(async () => (await this.backlog(topic)) === 1, 20_000, `the original of ${topic} acknowledged beside its copy`, 100);
    return this.peek(topic);
  }

  async readDeadLetter(dlq: string): Promise<NativeRecord> {
    await until(async () => (await this.backlog(dlq)) >= 1, 20_000, `a record on ${dlq}`, 100);
    return this.peek(dlq);
  }

  project(body: Buffer): Record<string, unknown> {
    return projectPulsar(bodySays(body));
  }

  async close(): Promise<void> {
    for (const topic of this.topics) {
      await fetch(`${this.url}/admin/v2/${path(topic)}?force=true`, { method: 'DELETE' }).catch(() => undefined);
    }
  }

  private async backlog(topic: string): Promise<number> {
    const res = await fetch(`${this.url}/admin/v2/${path(topic)}/stats`);
    if (res.status === 404) return 0;
    const stats = (await res.json()) as { subscriptions?: Record<string, { msgBacklog?: number }> };
    return stats.subscriptions?.[SUBSCRIPTION]?.msgBacklog ?? 0;
  }

  /** The head of the subscription's backlog, peeked: its properties come as the `X-Pulsar-PROPERTY` JSON header. */
  private async peek(topic: string): Promise<NativeRecord> {
    const res = await fetch(`${this.url}/admin/v2/${path(topic)}/subscription/${SUBSCRIPTION}/position/1`);
    if (res.status !== 200) throw new Error(`peek ${topic}: HTTP ${res.status}`);
    const properties = JSON.parse(res.headers.get('x-pulsar-property') ?? '{}') as Record<string, string>;
    return { body: Buffer.from(await res.arrayBuffer()), ...split(properties) };
  }
}

export const row: AgreementRow = {
  binding: 'pulsar',
  skip: suite.skip,
  fields: { attempts: PulsarProperty.ATTEMPTS, schemaVersion: PulsarProperty.SCHEMA_VERSION, route: PulsarProperty.JOB },
  versionGate: true,
  poisonRetry: true,
  ridersOnDeadLetter: true,
  open: async () => new PulsarLab(suite.url!),
};
