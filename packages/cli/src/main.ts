import { VERSION } from '@babelqueue/core';
import { splitCommand } from './args.js';
import { consoleCommand } from './commands/console.js';
import { consume } from './commands/consume.js';
import { demo } from './commands/demo.js';
import { dlq } from './commands/dlq.js';
import { publish } from './commands/publish.js';
import { redis } from './commands/redis.js';
import { EXIT, OperationalError, UsageError } from './errors.js';
import { jsonLine } from './format.js';
import { nodeIo, type CliIo } from './io.js';
import { shortUsage, USAGE } from './usage.js';

const COMMANDS: Readonly<Record<string, (args: readonly string[], io: CliIo) => Promise<number>>> = {
  demo,
  publish,
  consume,
  dlq,
  console: consoleCommand,
  redis,
};

/**
 * Runs the `babelqueue` command line `argv` (without the node and script
 * names) and resolves with the exit code: 0 ok, 1 operational error, 2 usage
 * error. Never throws; errors are printed to `io.stderr` as one line (JSON
 * with `--json`), without a stack trace and without credentials.
 *
 * @example
 * ```ts
 * import { main } from 'babelqueue';
 * const code = await main(['publish', '--url', 'redis://127.0.0.1:6379', '--queue', 'orders', 'urn:babel:orders:created', '{"order_id":1}']);
 * ```
 */
export async function main(argv: readonly string[], io: CliIo = nodeIo()): Promise<number> {
  const json = argv.includes('--json');
  try {
    const { command, rest } = splitCommand(argv);
    if (command === undefined) {
      if (rest.includes('--version')) {
        io.stdout(`${VERSION}\n`);
        return EXIT.ok;
      }
      if (rest.includes('--help') || rest.includes('-h')) {
        io.stdout(`${USAGE.main}\n`);
        return EXIT.ok;
      }
      throw new UsageError('no command given', 'main');
    }
    if (command === 'help') {
      const topic = rest.find((a) => !a.startsWith('-'));
      io.stdout(`${topic !== undefined && Object.hasOwn(USAGE, topic) ? USAGE[topic as keyof typeof USAGE] : USAGE.main}\n`);
      return EXIT.ok;
    }
    const run = COMMANDS[command];
    if (run === undefined) throw new UsageError(`unknown command "${command}"`, 'main');
    return await run(rest, io);
  } catch (error) {
    return report(error, io, json);
  }
}

function report(error: unknown, io: CliIo, json: boolean): number {
  if (error instanceof UsageError) {
    io.stderr(json ? jsonLine({ error: error.message, exit: EXIT.usage }) : `babelqueue: ${error.message}\n${shortUsage(error.command)}\n`);
    return EXIT.usage;
  }
  const expected = error instanceof OperationalError;
  const message = expected ? error.message : `unexpected ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
  io.stderr(json ? jsonLine({ error: message, exit: EXIT.operational }) : `babelqueue: ${message}\n`);
  if (!expected && io.env.BABELQUEUE_DEBUG && error instanceof Error && error.stack) io.stderr(`${error.stack}\n`);
  return EXIT.operational;
}
