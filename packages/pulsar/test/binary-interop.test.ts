// The binary-protocol consumer against what the official Python client
// (pulsar-client, the C++ library underneath) writes on the lab's Pulsar:
// producer batches and single messages under every compression Pulsar has.
// The producer is test/support/batch-producer.py in the repository's `.venv`
// (created by `scripts/peers`); without it the suite skips loudly, and fails
// under CI=true, as the interop suites do. The consumer is our PulsarTransport
// (consumerProtocol 'binary') through createApp.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import * as zlib from 'node:zlib';
import { createApp } from '@babelqueue/core';
import { PulsarTransport } from '@babelqueue/pulsar';
import { captureLogger, envelope, lab, RawPulsar, serviceUrl, sleep, uniqueQueue } from './support/pulsar.js';
import { venvPython } from '../../../test/interop/support/python-peer.js';
import { until } from '../../../test/support/until.js';

const URN = 'urn:babel:orders:created';
const SCRIPT = fileURLToPath(new URL('./support/batch-producer.py', import.meta.url));
const hasZstd = typeof (zlib as unknown as { zstdDecompressSync?: unknown }).zstdDecompressSync === 'function';

/** The venv's Python with pulsar-client, or why the suite is skipped (loudly; an error under CI=true). */
function pythonClient(): { python: string; skip: string | false } {
  const python = venvPython();
  let problem: string | undefined;
  if (!existsSync(python)) {
    problem = `${python} does not exist; create it with \`scripts/peers\``;
  } else {
    try {
      execFileSync(python, ['-c', 'import pulsar'], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
    } catch (error) {
      problem = `pulsar-client does not import in ${python} (${(error as Error).message.split('\n')[0]}); re-run \`scripts/peers\``;
    }
  }
  if (problem === undefined) return { python, skip: false };
  if (process.env.CI === 'true') throw new Error(`interop suite "pulsar binary consumer" cannot run under CI=true: ${problem}`);
  process.stderr.write(`\n*** SKIPPED: pulsar binary consumer interop suite — ${problem} ***\n\n`);
  return { python, skip: `SKIPPED (no Python pulsar-client): ${problem}` };
}

const py = lab.skip === false ? pythonClient() : { python: '', skip: false as const };

type Compression = 'NONE' | 'LZ4' | 'ZLIB' | 'ZSTD' | 'SNAPPY';

interface Outgoing {
  readonly body: Buffer;
  readonly properties: Record<string, string>;
  /** A string only the body holds: it must never show up in a log line. */
  readonly marker: string;
}

interface PythonId {
  ledger: number;
  entry: number;
  partition: number;
  batch_index: number;
}

/** Publishes `messages` with the Python client; resolves with each message's id. */
function producePython(queue: string, compression: Compression, batching: boolean, messages: readonly Outgoing[]): Promise<PythonId[]> {
  const request = {
    serviceUrl,
    topic: `persistent://public/default/${queue}`,
    compression,
    batching,
    messages: messages.map((m) => ({ body: m.body.toString('base64'), properties: m.properties })),
  };
  return new Promise((resolve, reject) => {
    const child = execFile(py.python, [SCRIPT], { timeout: 90_000, maxBuffer: 4 * 1024 * 1024, env: { ...process.env, PYTHONIOENCODING: 'utf-8' } }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`batch-producer.py failed: ${error.message}\n${stderr}`));
        return;
      }
      try {
        resolve((JSON.parse(stdout) as { ids: PythonId[] }).ids);
      } catch {
        reject(new Error(`batch-producer.py printed no JSON:\n${stdout}\n${stderr}`));
      }
    });
    child.stdin!.end(JSON.stringify(request));
  });
}

/** Five envelopes as another SDK publishes them: the bq- projection plus one distinct non-ASCII property each. */
function outgoing(queue: string, label: string, count = 5): Outgoing[] {
  return Array.from({ length: count }, (_, i) => {
    const marker = `body-only-${label}-${i}-${randomBytes(6).toString('hex')}`;
    // Repeated text, so every codec finds matches to encode.
    const { body, projection } = envelope(URN, { i, marker, text: `héllo ✓ ${label} `.repeat(12) }, queue);
    return {
      body,
      marker,
      properties: {
        'bq-job': projection.urn,
        'bq-trace-id': projection.traceId,
        'bq-message-id': projection.messageId,
        'bq-schema-version': '1',
        'bq-source-lang': projection.lang,
        'bq-attempts': '0',
        'x-note': `note ${i} ✓ ${label}`,
      },
    };
  });
}

describe('Pulsar binary consumer: interop with the Python client\'s batches and compression', { skip: lab.skip || py.skip }, () => {
  const url = lab.url!;
  const raw = new RawPulsar(url);
  const created: string[] = [];
  after(() => raw.cleanup(created));

  function queueFor(label: string): string {
    const queue = uniqueQueue(`bq-pulsar-bin-${label}`);
    created.push(queue);
    return queue;
  }

  function app(queue: string, logger = captureLogger()) {
    const transport = new PulsarTransport({ url, serviceUrl, consumerProtocol: 'binary', negativeAckRedeliveryDelayMs: 100, logger });
    return { app: createApp({ transport, queue, logger }), logger };
  }

  /** Consumes up to `count` messages (bounded by idleMs), records each one's bytes and properties. */
  async function consume(queue: string, count: number) {
    const { app: a, logger } = app(queue);
    const got: { body: Buffer; headers: Record<string, unknown>; i: number }[] = [];
    a.handle(URN, (data: any, message) => {
      got.push({ body: Buffer.from(message.body), headers: { ...message.headers }, i: data.i });
    });
    const handled = await a.consume({ maxMessages: count, idleMs: 10_000 });
    await a.close();
    return { handled, got: got.sort((x, y) => x.i - y.i), logger };
  }

  function assertReceived(got: { body: Buffer; headers: Record<string, unknown> }[], sent: readonly Outgoing[]): void {
    assert.equal(got.length, sent.length, 'every message handled once');
    sent.forEach((m, i) => {
      const g = got[i]!;
      assert.ok(g.body.equals(m.body), `message ${i}: body byte for byte`);
      assert.deepEqual(g.headers, m.properties, `message ${i}: its own properties`);
    });
  }

  /** Asserts the Python client stored the messages as one batch entry. */
  function assertOneBatch(ids: PythonId[], count: number): void {
    assert.equal(ids.length, count);
    const [first] = ids;
    assert.ok(ids.every((id) => id.ledger === first!.ledger && id.entry === first!.entry), `one entry: ${JSON.stringify(ids)}`);
    assert.deepEqual(ids.map((id) => id.batch_index), Array.from({ length: count }, (_, i) => i), 'batch indexes 0..n-1');
  }

  for (const compression of ['NONE', 'LZ4', 'ZLIB', 'ZSTD', 'SNAPPY'] as const) {
    const decodable = compression !== 'ZSTD' || hasZstd;
    const title = decodable
      ? `a batch of 5 compressed ${compression}: all 5 handled, bodies byte for byte, each with its properties; backlog 0 after`
      : 'a batch of 5 compressed ZSTD on a Node without zstdDecompressSync: not consumed, logged without the bodies, the entry stays';
    it(title, async () => {
      const queue = queueFor(compression.toLowerCase());
      await raw.subscribe(queue);
      const sent = outgoing(queue, compression);
      assertOneBatch(await producePython(queue, compression, true, sent), 5);
      await raw.waitForBacklog(queue, 1); // Pulsar counts the batch as one entry

      if (decodable) {
        const { handled, got } = await consume(queue, 5);
        assert.equal(handled, 5);
        assertReceived(got, sent);
        await raw.waitForBacklog(queue, 0);
        return;
      }

      const { app: a, logger } = app(queue);
      let calls = 0;
      a.handle(URN, () => void (calls += 1));
      const stop = new AbortController();
      const consuming = a.consume({ signal: stop.signal, maxMessages: 5, idleMs: 60_000 });
      const failures = () => logger.lines.filter((line) => line.level === 'error' && /cannot read a message from Pulsar/.test(line.message));
      try {
        await until(() => failures().length >= 1, 20_000, 'the ZSTD entry to be refused');
      } finally {
        stop.abort();
      }
      assert.equal(await consuming, 0, 'nothing handed to the runtime');
      await a.close();
      assert.equal(calls, 0);
      for (const line of failures()) {
        assert.match(String(line.fields.error), /ZSTD/, 'names the codec');
        assert.match(String(line.fields.error), /newer Node/, 'says what reads it');
      }
      const text = logger.text();
      for (const m of sent) {
        assert.ok(!text.includes(m.marker), 'no body text is logged');
        assert.ok(!text.includes(m.body.toString('base64').slice(0, 40)), 'no body bytes are logged');
      }
      assert.equal(await raw.backlog(queue), 1, 'the entry stays on the subscription');
      // It is still there for a consumer that can read it: a raw WebSocket consumer takes all five.
      const taken = await raw.take(queue, 5);
      assert.deepEqual(taken.map((t) => t.body.toString('base64')), sent.map((m) => m.body.toString('base64')), 'intact for another consumer');
      await raw.waitForBacklog(queue, 0);
    });
  }

  it('non-batched LZ4 from the Python client: five entries, all handled byte for byte with their properties; backlog 0 after', async () => {
    const queue = queueFor('lz4-single');
    await raw.subscribe(queue);
    const sent = outgoing(queue, 'LZ4-single');
    const ids = await producePython(queue, 'LZ4', false, sent);
    assert.equal(new Set(ids.map((id) => `${id.ledger}:${id.entry}`)).size, 5, `five entries: ${JSON.stringify(ids)}`);
    await raw.waitForBacklog(queue, 5);
    const { handled, got } = await consume(queue, 5);
    assert.equal(handled, 5);
    assertReceived(got, sent);
    await raw.waitForBacklog(queue, 0);
  });

  // The broker charges a consumer one permit per message of a batch, so a
  // batch larger than the permits granted leaves them negative.
  it('a batch larger than the concurrency: at most `concurrency` (1) handlers run at once', async () => {
    const queue = queueFor('batch-concurrency');
    await raw.subscribe(queue);
    const sent = outgoing(queue, 'conc');
    assertOneBatch(await producePython(queue, 'NONE', true, sent), 5);
    await raw.waitForBacklog(queue, 1);
    const { app: a } = app(queue);
    let running = 0;
    let peak = 0;
    a.handle(URN, async () => {
      running += 1;
      peak = Math.max(peak, running);
      // The five arrive in one MESSAGE command: a handler held a moment shows whether the others start beside it.
      await sleep(50);
      running -= 1;
    });
    assert.equal(await a.consume({ concurrency: 1, maxMessages: 5, idleMs: 10_000 }), 5);
    await a.close();
    assert.equal(peak, 1, `peak concurrency ${peak} with concurrency 1`);
    await raw.waitForBacklog(queue, 0);
  });

  it('two batches of 5 at concurrency 1: the second batch is dispatched after the first, all 10 handled', async () => {
    const queue = queueFor('two-batches');
    await raw.subscribe(queue);
    const first = outgoing(queue, 'first');
    const second = outgoing(queue, 'second');
    assertOneBatch(await producePython(queue, 'LZ4', true, first), 5);
    assertOneBatch(await producePython(queue, 'LZ4', true, second), 5);
    await raw.waitForBacklog(queue, 2);
    const { app: a } = app(queue);
    const bodies: Buffer[] = [];
    a.handle(URN, (_data, message) => void bodies.push(Buffer.from(message.body)));
    // idleMs bounds the wait: a healthy consumer gets the second entry within a round trip of the first's permits.
    const handled = await a.consume({ concurrency: 1, maxMessages: 10, idleMs: 5000 });
    await a.close();
    assert.equal(handled, 10, `handled ${handled} of 10; backlog ${await raw.backlog(queue)} entries`);
    assert.deepEqual(bodies.map((b) => b.toString('base64')).sort(), [...first, ...second].map((m) => m.body.toString('base64')).sort());
    await raw.waitForBacklog(queue, 0);
  });
});
