import { drainQueue, REDRIVE_BATCH_CEILING } from '@babelqueue/core';
import { type Delivery } from '@babelqueue/core/binding';
import { parse } from '../args.js';
import { withBroker } from '../broker.js';
import { UsageError } from '../errors.js';
import { bodyLine, parseBody, prettyJson } from '../format.js';
import type { CliIo } from '../io.js';
import { USAGE } from '../usage.js';

/**
 * `babelqueue consume [--queue Q] [--max N] [--idle-ms MS] [--ack | --no-ack]`:
 * prints each delivery's envelope as it arrives. `--ack` (default) removes
 * each message once printed; `--no-ack` holds every message it took until
 * the command ends and then leaves them all for redelivery, so none is shown
 * twice. It prints raw deliveries: no handlers, no retry or dead-letter rules.
 */
export async function consume(args: readonly string[], io: CliIo): Promise<number> {
  const cli = parse('consume', args, {
    queue: { type: 'string' },
    max: { type: 'string' },
    'idle-ms': { type: 'string' },
    ack: { type: 'boolean' },
    'no-ack': { type: 'boolean' },
  }, io);
  if (cli.help) {
    io.stdout(`${USAGE.consume}\n`);
    return 0;
  }
  if (cli.positionals.length > 0) throw new UsageError(`unexpected argument "${cli.positionals[0]}"`, 'consume');
  if (cli.flag('ack') && cli.flag('no-ack')) throw new UsageError('--ack and --no-ack exclude each other', 'consume');
  const queue = cli.string('queue') ?? 'default';
  const max = cli.integer('max', 1);
  const idleMs = cli.integer('idle-ms');
  const ack = !cli.flag('no-ack');
  const { json } = cli.global;
  const signal = io.signal ?? new AbortController().signal;
  let count = 0;
  const show = (delivery: Delivery) => {
    count += 1;
    io.stdout(json ? `${bodyLine(delivery.body)}\n` : human(delivery, count));
  };

  return withBroker('consume', cli.global, async (broker) => {
    const { transport } = broker;
    if (ack) {
      await transport.consume(queue, async (delivery) => {
        show(delivery);
        await delivery.settle({ kind: 'ack' });
      }, {
        concurrency: 1,
        signal,
        ...(max !== undefined ? { maxMessages: max } : {}),
        ...(idleMs !== undefined ? { idleMs } : {}),
      });
    } else {
      await drainQueue(transport, queue, {
        max: max ?? REDRIVE_BATCH_CEILING,
        signal,
        onTaken: show,
        ...(idleMs !== undefined ? { idleMs } : {}),
      }, async (taken) => {
        for (const delivery of taken) await delivery.settle({ kind: 'unsettled', why: 'babelqueue consume --no-ack' });
      });
    }
    if (!json) io.stderr(`${count} message${count === 1 ? '' : 's'} ${ack ? 'consumed' : 'shown and left on the queue'} (${queue})\n`);
    return 0;
  });
}

function human(delivery: Delivery, n: number): string {
  const text = parseBody(delivery.body) === undefined
    ? `<not a JSON body: ${delivery.body.length} bytes>`
    : prettyJson(delivery.body.toString('utf8'));
  return `--- #${n} from ${delivery.queue}\n${text}\n`;
}
