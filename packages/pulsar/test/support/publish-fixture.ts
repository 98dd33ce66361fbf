/**
 * The set-up the publish suites share (publish.test.ts, publish-many.test.ts):
 * the binding's transport on the lab's Pulsar, opened before the suite and
 * closed after it, a raw client to read back what it wrote, and fresh topics
 * (with their `.dlq`), deleted after the suite. Call it inside `describe`.
 */
import { after, before } from 'node:test';
import { silentLogger } from '@babelqueue/core';
import { PulsarTransport } from '@babelqueue/pulsar';
import { lab, RawPulsar, uniqueQueue } from './pulsar.js';

export interface PublishFixture {
  /** The lab broker's web service. */
  readonly url: string;
  /** The transport under test (open from the suite's `before` on). */
  readonly transport: PulsarTransport;
  /** The WebSocket and admin APIs used directly, to read back what the transport wrote. */
  readonly raw: RawPulsar;
  /** A fresh topic named `<prefix>-<label>-…`, deleted after the suite with its `.dlq`. */
  readonly queue: (label: string) => string;
}

export function publishFixture(prefix: string): PublishFixture {
  const url = lab.url!;
  const raw = new RawPulsar(url);
  const created: string[] = [];
  let transport: PulsarTransport | undefined;
  before(() => {
    transport = new PulsarTransport({ url, logger: silentLogger });
  });
  after(async () => {
    await transport?.close();
    await raw.cleanup(created);
  });
  return {
    url,
    raw,
    get transport() {
      if (transport === undefined) throw new Error('the publish fixture is used before its before hook ran');
      return transport;
    },
    queue: (label) => {
      const q = uniqueQueue(`${prefix}-${label}`);
      created.push(q, `${q}.dlq`);
      return q;
    },
  };
}
