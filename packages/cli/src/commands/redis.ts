import { parse, splitCommand } from '../args.js';
import { withBroker } from '../broker.js';
import { OperationalError, UsageError } from '../errors.js';
import { jsonLine } from '../format.js';
import type { CliIo } from '../io.js';
import { USAGE } from '../usage.js';

/** What the CLI uses of `@babelqueue/redis`, loaded on first use so the CLI does not depend on it. */
interface RedisBinding {
  legacyCleanup(client: unknown, queue: string, options: { consumersStopped: boolean }): Promise<number>;
}

/** The parts of a `RedisTransport` the cleanup needs. */
interface RedisTransportLike {
  readonly layout?: unknown;
  readonly client?: unknown;
}

const PACKAGE = '@babelqueue/redis';

/** `babelqueue redis legacy-cleanup --queue Q --consumers-stopped`: Redis-only maintenance. */
export async function redis(args: readonly string[], io: CliIo): Promise<number> {
  const { command: name, rest } = splitCommand(args);
  if (name !== 'legacy-cleanup') {
    if (name === undefined && (rest.includes('--help') || rest.includes('-h'))) {
      io.stdout(`${USAGE.redis}\n`);
      return 0;
    }
    throw new UsageError(name === undefined ? 'redis needs a subcommand: legacy-cleanup' : `unknown redis subcommand "${name}"`, 'redis');
  }
  const cli = parse('redis', rest, { queue: { type: 'string' }, 'consumers-stopped': { type: 'boolean' } }, io);
  if (cli.help) {
    io.stdout(`${USAGE.redis}\n`);
    return 0;
  }
  if (cli.positionals.length > 0) throw new UsageError(`unexpected argument "${cli.positionals[0]}"`, 'redis');
  const queue = cli.string('queue');
  if (queue === undefined || queue.trim() === '') throw new UsageError('redis legacy-cleanup needs --queue Q', 'redis');
  if (!cli.flag('consumers-stopped')) {
    throw new UsageError(
      `legacy-cleanup hands every +inf reservation of "${queue}" back to the ready list; a consumer still running ` +
        'would see its messages delivered twice. Stop every consumer of the queue, then confirm with --consumers-stopped',
      'redis',
    );
  }
  if (!/^rediss?:\/\//i.test(cli.global.url)) {
    throw new UsageError('redis legacy-cleanup needs a Redis broker: --url redis://host:6379 (or BABELQUEUE_URL)', 'redis');
  }
  const binding = await load();
  return withBroker('redis', cli.global, async (broker) => {
    const transport = broker.transport as RedisTransportLike;
    if (transport.layout !== 'legacy' || transport.client === undefined) {
      throw new UsageError(`legacy-cleanup is for the legacy layout; ${broker.where} is the ${String(transport.layout ?? broker.transport.rules.name)} layout`, 'redis');
    }
    const handled = await broker.call(`legacy-cleanup ${queue}`, binding.legacyCleanup(transport.client, queue, { consumersStopped: true }));
    io.stdout(cli.global.json
      ? jsonLine({ queue, handled })
      : `${handled} +inf reservation${handled === 1 ? '' : 's'} of ${queue} handled (each value still on ${queue}:processing is back on ${queue})\n`);
    return 0;
  });
}

async function load(): Promise<RedisBinding> {
  let module: Partial<RedisBinding>;
  try {
    module = (await import(PACKAGE)) as Partial<RedisBinding>;
  } catch {
    throw new OperationalError(`redis legacy-cleanup needs the ${PACKAGE} package: npm install ${PACKAGE}`);
  }
  if (typeof module.legacyCleanup !== 'function') throw new OperationalError(`${PACKAGE} does not export legacyCleanup; update it`);
  return module as RedisBinding;
}
