import { drainQueue, healthOf, REDRIVE_BATCH_CEILING, RunHealth, serveHealth, type Logger } from '@babelqueue/core';
import { type Delivery } from '@babelqueue/core/binding';
import { parse } from '../args.js';
import { withBroker } from '../broker.js';
import { UsageError } from '../errors.js';
import { bodyLine, parseBody, prettyJson } from '../format.js';
import type { CliIo } from '../io.js';
import { USAGE } from '../usage.js';

/**
 * `babelqueue consume [--queue Q] [--max N] [--idle-ms MS] [--ack | --no-ack] [--health-port N [--health-host H]]`:
 * prints each delivery's envelope as it arrives. `--ack` (default) removes
 * each message once printed; `--no-ack` holds every message it took until
 * the command ends and then leaves them all for redelivery, so none is shown
 * twice. It prints raw deliveries: no handlers, no retry or dead-letter rules.
 * `--health-port` serves `/healthz` and `/readyz` while it consumes (as
 * `app.run({ health })` does), on 127.0.0.1 unless `--health-host`.
 */
export async function consume(args: readonly string[], io: CliIo): Promise<number> {
  const cli = parse('consume', args, {
    queue: { type: 'string' },
    max: { type: 'string' },
    'idle-ms': { type: 'string' },
    ack: { type: 'boolean' },
    'no-ack': { type: 'boolean' },
    'health-port': { type: 'string' },
    'health-host': { type: 'string' },
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
  const healthPort = cli.integer('health-port');
  const healthHost = cli.string('health-host');
  if (healthPort !== undefined && healthPort > 65_535) throw new UsageError(`--health-port must be a TCP port (0 to 65535), got ${healthPort}`, 'consume');
  if (healthHost !== undefined && healthPort === undefined) throw new UsageError('--health-host needs --health-port', 'consume');
  if (healthPort !== undefined && !ack) throw new UsageError('--health-port serves a consumer that acknowledges; it excludes --no-ack', 'consume');
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
      const health = new RunHealth(queue, 1, STALLED_AFTER_MS);
      const server = healthPort === undefined ? undefined : await serveHealth(() => healthOf(transport, new Set([health])), healthPort, healthHost ?? '127.0.0.1', stderrLogger(io));
      if (server !== undefined) io.stderr(`health probes on http://${healthHost ?? '127.0.0.1'}:${server.port}/healthz and /readyz\n`);
      health.started();
      try {
        await transport.consume(queue, async (delivery) => {
          health.delivered();
          try {
            show(delivery);
            await delivery.settle({ kind: 'ack' });
            health.settled();
          } finally {
            health.finished();
          }
        }, {
          concurrency: 1,
          signal,
          ...(max !== undefined ? { maxMessages: max } : {}),
          ...(idleMs !== undefined ? { idleMs } : {}),
        });
      } finally {
        health.stopping();
        await server?.close();
      }
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

/** `babelqueue consume --health-port`: stalled once messages wait a minute with nothing taken (the App's default). */
const STALLED_AFTER_MS = 60_000;

/** The probe server's rare warnings, as stderr lines. */
function stderrLogger(io: CliIo): Logger {
  const line = (_fields: Record<string, unknown>, message: string) => io.stderr(`${message}\n`);
  return { debug: () => undefined, info: line, warn: line, error: line };
}

function human(delivery: Delivery, n: number): string {
  const text = parseBody(delivery.body) === undefined
    ? `<not a JSON body: ${delivery.body.length} bytes>`
    : prettyJson(delivery.body.toString('utf8'));
  return `--- #${n} from ${delivery.queue}\n${text}\n`;
}
