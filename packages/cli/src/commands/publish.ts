import { createApp, silentLogger } from '@babelqueue/core';
import { parse } from '../args.js';
import { withBroker } from '../broker.js';
import { UsageError } from '../errors.js';
import { jsonLine } from '../format.js';
import type { CliIo } from '../io.js';
import { USAGE } from '../usage.js';

/**
 * What the CLI accepts as a job name: `urn:` and at least two more
 * colon-separated parts, no whitespace. The runtime takes any non-blank
 * string (no SDK enforces the pattern), but a consumer routes by exact URN, so
 * a name typed without it (`orders.created`) would only meet "no handler".
 */
const URN = /^urn:[^\s:]+(?::[^\s:]+)+$/i;

/** `babelqueue publish [--queue Q] URN 'JSON-DATA' [--trace-id T] [--delay-ms D]`: prints the new `meta.id`. */
export async function publish(args: readonly string[], io: CliIo): Promise<number> {
  const cli = parse('publish', args, {
    queue: { type: 'string' },
    'trace-id': { type: 'string' },
    'delay-ms': { type: 'string' },
  }, io);
  if (cli.help) {
    io.stdout(`${USAGE.publish}\n`);
    return 0;
  }
  const [urn, text, ...extra] = cli.positionals;
  if (urn === undefined || text === undefined) throw new UsageError('publish needs a URN and the JSON data', 'publish');
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}" (quote the JSON data)`, 'publish');
  if (urn.trim() === '') throw new UsageError('the URN must not be blank', 'publish');
  if (!URN.test(urn.trim())) {
    throw new UsageError(`"${urn.trim()}" is not a URN: a job name looks like urn:<namespace>:<context>:<event>, e.g. urn:babel:orders:created`, 'publish');
  }
  const data = jsonObject(text);
  const queue = cli.string('queue') ?? 'default';
  const traceId = cli.string('trace-id');
  const delayMs = cli.integer('delay-ms');

  return withBroker('publish', cli.global, async (broker) => {
    const app = createApp({ transport: broker.transport, queue, logger: silentLogger });
    const id = await broker.call('publish', app.publish(urn, data, {
      ...(traceId !== undefined ? { traceId } : {}),
      ...(delayMs ? { delayMs } : {}),
    }));
    io.stdout(cli.global.json ? jsonLine({ id, urn: urn.trim(), queue }) : `${id}\n`);
    return 0;
  });
}

function jsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`JSON-DATA is not valid JSON (${error instanceof Error ? error.message : String(error)})`, 'publish');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new UsageError('JSON-DATA must be a JSON object, e.g. \'{"order_id": 1042}\'', 'publish');
  }
  return value as Record<string, unknown>;
}
