import { maskUrl, transportFromUrl, type Transport } from '@babelqueue/core';
import { OperationalError, UsageError } from './errors.js';
import type { GlobalSettings } from './args.js';
import { refuseProcessLocal } from './process-local.js';
import type { Command } from './usage.js';

/** A connected transport plus what the CLI needs to report on it without leaking credentials. */
export interface Broker {
  readonly transport: Transport;
  /** The URL with credentials masked: the only form that is ever printed. */
  readonly where: string;
  /** Bounds one broker operation by `--timeout-ms`; a late or failed answer becomes an {@link OperationalError}. */
  call<T>(what: string, operation: Promise<T>): Promise<T>;
  /** The error as one printable line, with credentials removed. */
  describe(error: unknown): string;
}

/**
 * Opens the transport for `--url` (refusing `memory://` where no other process
 * could see it), runs `work` with it and closes it. Any
 * failure inside `work` that is not already a CLI error becomes an
 * {@link OperationalError} naming the masked URL.
 */
export async function withBroker<T>(command: Command, settings: GlobalSettings, work: (broker: Broker) => Promise<T>): Promise<T> {
  const url = settings.url;
  try {
    new URL(url);
  } catch {
    throw new UsageError(`--url is not a URL: "${maskUrl(url) === '<unparseable URL>' ? redactUserInfo(url) : maskUrl(url)}"`, command);
  }
  refuseProcessLocal(command, settings);
  const where = maskUrl(url);
  const secrets = secretsOf(url);
  const describe = (error: unknown) => redact(messageOf(error), secrets);

  let transport: Transport;
  try {
    transport = await transportFromUrl(url);
  } catch (error) {
    throw new OperationalError(describe(error));
  }
  const broker: Broker = {
    transport,
    where,
    describe,
    call: (what, operation) => bounded(operation, settings.timeoutMs, what, where, describe),
  };
  try {
    // Honest start-up: an unreachable broker, an unknown host or a refused
    // login is one clear line before any work, never a silent retry loop.
    await transport.connect({ timeoutMs: settings.timeoutMs }).catch((error: unknown) => {
      throw new OperationalError(describe(error));
    });
    return await work(broker);
  } catch (error) {
    if (error instanceof UsageError || error instanceof OperationalError) throw error;
    throw new OperationalError(`${describe(error)} (${where})`);
  } finally {
    // A broker that never answered may never acknowledge the close either.
    await bounded(transport.close(), 1500, 'close', where, describe).catch(() => undefined);
  }
}

async function bounded<T>(operation: Promise<T>, timeoutMs: number, what: string, where: string, describe: (e: unknown) => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new OperationalError(`${what}: no answer from ${where} within ${timeoutMs} ms (is the broker running?)`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([operation, timeout]);
  } catch (error) {
    if (error instanceof OperationalError || error instanceof UsageError) throw error;
    throw new OperationalError(`${what} failed on ${where}: ${describe(error)}`);
  } finally {
    clearTimeout(timer);
    // The losing operation may still reject later; it has nobody to tell.
    operation.catch(() => undefined);
  }
}

/** An error's message; an empty one (AggregateError from a dual-stack connect) falls back to its code or name. */
function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message !== '') return error.message;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : error.name;
}

/** The URL's credentials in every spelling an error message might use. */
function secretsOf(url: string): string[] {
  const parsed = new URL(url);
  const raw = parsed.password !== '' ? parsed.password : parsed.username;
  if (raw === '') return [];
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    // Keep the raw form only.
  }
  return [...new Set([raw, decoded])].filter((s) => s.length > 0);
}

function redact(text: string, secrets: readonly string[]): string {
  let out = text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/\s@]*@/gi, '$1***@');
  for (const secret of secrets) out = out.split(secret).join('***');
  return out;
}

function redactUserInfo(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
