import { InMemoryTransport, type StoredMessage } from '@babelqueue/core';
import { projectPulsar } from '@babelqueue/core/binding';
import { uniqueQueue } from '../../support/brokers.js';
import { until } from '../../support/until.js';
import { bodySays } from '../expected.js';
import type { AgreementLab, AgreementRow, NativeRecord, ProduceOptions } from '../row.js';

/** The in-memory transport's string headers: the Pulsar-style `bq-` projection. */
const CONTRACT = ['bq-job', 'bq-trace-id', 'bq-message-id', 'bq-schema-version', 'bq-source-lang', 'bq-attempts', 'bq-delay'];

function nativeOf(message: StoredMessage): NativeRecord {
  const contract: Record<string, unknown> = {};
  const riders: Record<string, string> = {};
  for (const [key, value] of Object.entries(message.headers)) {
    if (value === null) continue;
    if (CONTRACT.includes(key)) contract[key] = value;
    else riders[key] = String(value);
  }
  return { body: message.body, contract, riders };
}

class MemoryLab implements AgreementLab {
  private readonly shared = new InMemoryTransport();

  async queue(prefix: string): Promise<string> {
    return uniqueQueue(prefix);
  }

  transport(): InMemoryTransport {
    return new InMemoryTransport({ broker: this.shared.broker });
  }

  async produce(queue: string, body: Buffer, options: ProduceOptions = {}): Promise<void> {
    const headers = projectPulsar(bodySays(options.claims ?? body), options.riders);
    if (options.schemaVersion !== undefined) headers['bq-schema-version'] = options.schemaVersion;
    await this.shared.publishRaw(queue, body, headers);
  }

  readRetry(queue: string): Promise<NativeRecord> {
    return this.head(queue);
  }

  readDeadLetter(dlq: string): Promise<NativeRecord> {
    return this.head(dlq);
  }

  project(body: Buffer): Record<string, unknown> {
    return projectPulsar(bodySays(body));
  }

  async close(): Promise<void> {}

  private async head(queue: string): Promise<NativeRecord> {
    await until(() => this.shared.broker.ready(queue).length > 0, 5000, `a message on ${queue}`);
    return nativeOf(this.shared.broker.ready(queue)[0]!);
  }
}

export const row: AgreementRow = {
  binding: 'memory',
  skip: false,
  fields: { attempts: 'bq-attempts', schemaVersion: 'bq-schema-version' },
  versionGate: true,
  poisonRetry: false,
  ridersOnDeadLetter: true,
  open: async () => new MemoryLab(),
};
