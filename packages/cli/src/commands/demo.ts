import { consoleLogger, createApp } from '@babelqueue/core';
import { parse } from '../args.js';
import { withBroker } from '../broker.js';
import { OperationalError, UsageError } from '../errors.js';
import { clip, columns, field, jsonLine, parseBody } from '../format.js';
import type { CliIo } from '../io.js';
import { USAGE } from '../usage.js';

const CREATED = 'urn:babel:orders:created';
const CHARGE = 'urn:babel:payments:charge';
const MAX_ATTEMPTS = 3;
/** How long the demo waits for its own messages to be handled before it gives up. */
const DEADLINE_MS = 60_000;
/** How often it checks whether they are. */
const POLL_MS = 20;

/** The error the demo's payment handler keeps throwing. */
class GatewayTimeout extends Error {
  override readonly name = 'GatewayTimeout';
}

interface Step {
  urn: string;
  id: string;
  orderId: number;
  attempt: number;
  outcome: 'handled' | 'retry' | 'dead-lettered';
  error?: string;
}

/**
 * `babelqueue demo`: the README's main job. Publishes three orders and one
 * payment, handles them, lets the payment fail until it is dead-lettered
 * (max attempts 3, dead-lettering on) and shows the record on `<queue>.dlq`.
 */
export async function demo(args: readonly string[], io: CliIo): Promise<number> {
  const cli = parse('demo', args, { queue: { type: 'string' } }, io);
  if (cli.help) {
    io.stdout(`${USAGE.demo}\n`);
    return 0;
  }
  if (cli.positionals.length > 0) throw new UsageError(`unexpected argument "${cli.positionals[0]}"`, 'demo');
  const queue = cli.string('queue') ?? 'orders';
  const { json } = cli.global;

  return withBroker('demo', cli.global, async (broker) => {
    const { transport } = broker;
    if (!transport.capabilities.retry) {
      throw new OperationalError(
        `the ${transport.rules.name} transport, as configured, cannot retry a failed message, so the demo's retry-then-dead-letter run ` +
        'cannot happen there (Kafka: add ?retryTiersMs=default to the URL)',
      );
    }
    const app = createApp({ transport, queue, maxAttempts: MAX_ATTEMPTS, deadLetter: true, logger: consoleLogger('error') });
    const dlq = app.deadLetterQueueName();
    const steps: Step[] = [];
    // The demo's own messages; anything else found on the queue is handled but not reported.
    const ids = new Set<string>();
    let paymentDone = false;

    app.handle<{ order_id: number }>(CREATED, (data, message) => {
      if (!ids.has(message.id)) return;
      steps.push({ urn: message.urn, id: message.id, orderId: data.order_id, attempt: message.attempts, outcome: 'handled' });
    });
    app.handle<{ order_id: number }>(CHARGE, (data, message) => {
      if (!ids.has(message.id)) return;
      const final = message.attempts >= MAX_ATTEMPTS;
      const error = 'Payment gateway timeout';
      steps.push({ urn: message.urn, id: message.id, orderId: data.order_id, attempt: message.attempts, outcome: final ? 'dead-lettered' : 'retry', error });
      if (final) paymentDone = true;
      throw new GatewayTimeout(error);
    });

    const messages: [string, number][] = [[CREATED, 1041], [CREATED, 1042], [CHARGE, 1042], [CREATED, 1043]];
    const published: { id: string; urn: string; orderId: number }[] = [];
    for (const [urn, orderId] of messages) {
      const id = await broker.call('publish', app.publish(urn, { order_id: orderId }));
      ids.add(id);
      published.push({ id, urn, orderId });
    }
    // Three orders once, the payment MAX_ATTEMPTS times.
    const expected = messages.length - 1 + MAX_ATTEMPTS;
    const local = transport.rules.name === 'memory';
    const done = () => paymentDone && steps.filter((s) => s.outcome === 'handled').length === messages.length - 1;

    // Consume until the demo's messages are handled (the in-flight payment settles, i.e. is
    // dead-lettered, before consume returns), bounded by a deadline rather than an idle guess.
    const stop = new AbortController();
    let ended = false;
    const consuming = app.consume({ signal: stop.signal, idleMs: DEADLINE_MS }).finally(() => (ended = true));
    const finished = await poll(() => done() || ended);
    stop.abort();
    await consuming;
    if (!finished || !done()) {
      throw new OperationalError(`the demo's messages were not all handled within ${DEADLINE_MS / 1000} s (${steps.length} of ${expected} deliveries)`);
    }

    // The record is written before the payment settles; a browse may still lag it (SQS).
    let records: unknown[] = [];
    if (transport.browse) {
      const browse = transport.browse.bind(transport);
      await poll(async () => {
        const bodies = await broker.call('browse', browse(dlq, 1000));
        records = bodies.map(parseBody).filter((r) => ids.has(field(r, 'meta.id')));
        return records.length > 0;
      });
    }

    if (json) {
      io.stdout(jsonLine({
        url: broker.where,
        queue,
        dlq,
        published: published.map((p) => ({ id: p.id, urn: p.urn, order_id: p.orderId })),
        deliveries: steps.map((s) => ({ urn: s.urn, id: s.id, order_id: s.orderId, attempt: s.attempt, outcome: s.outcome, ...(s.error ? { error: s.error } : {}) })),
        dead_letters: records,
      }));
      return 0;
    }

    let out = `BabelQueue demo on ${broker.where}: queue "${queue}", max attempts ${MAX_ATTEMPTS}, dead-lettering on\n\n`;
    out += `published ${published.length} messages, then handled them:\n`;
    out += columns(steps.map((s) => [
      s.outcome === 'handled' ? '✓' : '✗',
      s.urn,
      `order ${s.orderId}`,
      `attempt ${s.attempt}`,
      s.error === undefined ? '' : `${s.error} → ${s.outcome === 'retry' ? 'retry' : dlq}`,
    ]), '  ');
    if (records.length === 0) {
      out += transport.browse ? `\n${dlq} has no record from this run.\n` : `\nthe ${transport.rules.name} transport cannot browse ${dlq}; read it with "babelqueue consume --queue ${dlq} --no-ack".\n`;
    }
    for (const record of records) {
      out += `\n${dlq} now holds the failed payment, its original envelope verbatim plus a dead_letter block:\n`;
      out += columns([
        ['job', field(record, 'job')],
        ['reason', field(record, 'dead_letter.reason')],
        ['error', clip(field(record, 'dead_letter.error'), 80)],
        ['exception', field(record, 'dead_letter.exception')],
        ['attempts', field(record, 'dead_letter.attempts')],
        ['trace_id', field(record, 'trace_id')],
        ['meta.id', field(record, 'meta.id')],
      ], '  ');
    }
    out += local
      ? '\nOn a real broker: export BABELQUEUE_URL=redis://127.0.0.1:6379, then babelqueue demo\n'
      : `\nNext, with the same --url: babelqueue dlq list --queue ${queue}; babelqueue dlq redrive --queue ${queue} --dry-run\n`;
    io.stdout(out);
    return 0;
  });
}

/** Checks `ready` every {@link POLL_MS} until it holds (true) or {@link DEADLINE_MS} passes (false). */
async function poll(ready: () => boolean | Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    if (await ready()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
