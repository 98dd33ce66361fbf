import { parse } from '../args.js';
import { withBroker } from '../broker.js';
import { OperationalError, UsageError } from '../errors.js';
import { jsonLine } from '../format.js';
import type { CliIo } from '../io.js';
import { USAGE } from '../usage.js';

/** What the CLI uses of `@babelqueue/console`, loaded on first use so the CLI does not depend on it. */
interface ConsolePackage {
  startConsole(options: Record<string, unknown>): Promise<{ url: string; close(): Promise<void> }>;
}

const PACKAGE = '@babelqueue/console';

const OPTIONS = {
  queue: { type: 'string', multiple: true },
  dlq: { type: 'string', multiple: true },
  host: { type: 'string' },
  port: { type: 'string' },
  'read-only': { type: 'boolean' },
  token: { type: 'string' },
  'basic-auth': { type: 'string' },
  'scan-limit': { type: 'string' },
  'scan-budget-ms': { type: 'string' },
  'allow-counted-reads': { type: 'boolean' },
  'audit-log': { type: 'string' },
} as const;

/** The console's default port: clear of the lab's Pulsar admin and WebSocket API on 8080. */
const DEFAULT_PORT = 8794;

/** `babelqueue console`: the DLQ web page, until Ctrl-C. */
export async function consoleCommand(args: readonly string[], io: CliIo): Promise<number> {
  const cli = parse('console', args, OPTIONS, io);
  if (cli.help) {
    io.stdout(`${USAGE.console}\n`);
    return 0;
  }
  if (cli.positionals.length > 0) throw new UsageError(`unexpected argument "${cli.positionals[0]}"`, 'console');
  const port = cli.integer('port') ?? DEFAULT_PORT;
  if (port > 65535) throw new UsageError(`--port must be 0-65535, got ${port}`, 'console');
  const token = cli.string('token') ?? nonBlank(io.env.BABELQUEUE_CONSOLE_TOKEN);
  const basic = cli.string('basic-auth') ?? nonBlank(io.env.BABELQUEUE_CONSOLE_BASIC_AUTH);
  if (token !== undefined && basic !== undefined) throw new UsageError('give --token or --basic-auth, not both', 'console');
  if (token !== undefined && token.length < 16) throw new UsageError('--token must be at least 16 characters', 'console');
  const colon = basic?.indexOf(':') ?? -1;
  if (basic !== undefined && (colon < 1 || colon === basic.length - 1)) throw new UsageError('--basic-auth takes user:password', 'console');
  const host = cli.string('host') ?? '127.0.0.1';
  if (token === undefined && basic === undefined && !isLoopback(host)) {
    throw new UsageError(`--host ${host} is reachable beyond this machine: add --token (at least 16 characters) or --basic-auth user:password`, 'console');
  }
  const scanLimit = cli.integer('scan-limit', 1);
  const scanBudgetMs = cli.integer('scan-budget-ms', 1);
  const auditLog = cli.string('audit-log');
  if (auditLog !== undefined && auditLog.trim() === '') throw new UsageError('--audit-log takes a file path', 'console');
  const module = await load();
  return withBroker('console', { ...cli.global, url: forDrains(cli.global.url) }, async (broker) => {
    const running = await module.startConsole({
      transport: broker.transport,
      queues: cli.strings('queue'),
      dlqs: cli.strings('dlq'),
      host,
      port,
      readOnly: cli.flag('read-only'),
      allowCountedReads: cli.flag('allow-counted-reads'),
      ...(token !== undefined ? { token } : {}),
      ...(basic !== undefined ? { basicAuth: { username: basic.slice(0, colon), password: basic.slice(colon + 1) } } : {}),
      ...(scanLimit !== undefined ? { scanLimit } : {}),
      ...(scanBudgetMs !== undefined ? { scanBudgetMs } : {}),
      ...(auditLog !== undefined ? { auditLog } : {}),
    }).catch((error: unknown) => {
      const code = (error as { code?: string }).code;
      throw new OperationalError(code === 'EADDRINUSE' ? `port ${port} on ${host} is in use; pick another with --port` : broker.describe(error));
    });
    const open = token !== undefined ? `${running.url}?token=${encodeURIComponent(token)}` : running.url;
    io.stdout(cli.global.json ? jsonLine({ url: running.url, open, read_only: cli.flag('read-only') }) : `DLQ console on ${open}\n`);
    io.stderr(`showing ${broker.where}${cli.flag('read-only') ? ' (read-only)' : ''}; Ctrl-C stops it\n`);
    await stopped(io.signal);
    await running.close();
    return 0;
  });
}

async function load(): Promise<ConsolePackage> {
  let module: Partial<ConsolePackage>;
  try {
    module = (await import(PACKAGE)) as Partial<ConsolePackage>;
  } catch {
    throw new OperationalError(`babelqueue console needs the ${PACKAGE} package: npm install ${PACKAGE}`);
  }
  if (typeof module.startConsole !== 'function') throw new OperationalError(`${PACKAGE} does not export startConsole; update it`);
  return module as ConsolePackage;
}

/**
 * A Kafka URL without `ordering` gets `ordering=none`: the console's redrive
 * and delete drain the DLQ and hold what they take, and with the default
 * per-partition ordering they would get one record per partition.
 */
function forDrains(url: string): string {
  if (!/^kafka:\/\//i.test(url) || /[?&]ordering=/.test(url)) return url;
  return `${url}${url.includes('?') ? '&' : '?'}ordering=none`;
}

function stopped(signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return new Promise(() => undefined);
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare);
}

function nonBlank(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
