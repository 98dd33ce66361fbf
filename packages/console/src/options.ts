import { homedir } from 'node:os';
import { join } from 'node:path';
import { ConfigurationError, consoleLogger, dlqName, type Logger, type Transport } from '@babelqueue/core';

/** Options of {@link startConsole}. */
export interface ConsoleOptions {
  /** A transport of the broker to inspect; the console uses it and never closes it. */
  readonly transport: Transport;
  /** Work queues whose DLQs to show (the binding names each DLQ: `<queue>.dlq`, `<queue>-dlq` on SQS). */
  readonly queues?: readonly string[];
  /** DLQs to show by their own names. With neither, the DLQ of the queue `default`. */
  readonly dlqs?: readonly string[];
  /** Address to listen on. Default `127.0.0.1`; anything but loopback needs `token` or `basicAuth`. */
  readonly host?: string;
  /** Port. Default {@link DEFAULT_PORT} (8794); 0 picks a free one. */
  readonly port?: number;
  /** Show records only: every action is hidden in the page and refused by the API. */
  readonly readOnly?: boolean;
  /**
   * A shared secret: open the page once at `/?token=…` (it then lives in a
   * session cookie), or send `Authorization: Bearer …` from scripts. At least 16 characters.
   */
  readonly token?: string;
  /** HTTP basic authentication: the browser asks for these. */
  readonly basicAuth?: { readonly username: string; readonly password: string };
  /** Records one request reads at most (pages, searches, charts, bulk actions). Default 100000. */
  readonly scanLimit?: number;
  /**
   * How long one read request (a page, a search, open-by-id, a step of the
   * charts) reads before it answers with what it found, how much it scanned
   * and a cursor to carry on, in ms. Default {@link DEFAULT_SCAN_BUDGET_MS} (1500).
   */
  readonly scanBudgetMs?: number;
  /** How often the depth chart samples each DLQ, in ms. Default 10000. */
  readonly sampleEveryMs?: number;
  /** Brokers without targeted removal: the drain ends once no record arrived for this long. Default 1000 ms. */
  readonly idleMs?: number;
  /**
   * Read queues where reading counts a delivery of every record read (a
   * RabbitMQ quorum queue: each page, search or chart takes every record and
   * puts it back, and at the queue's delivery limit RabbitMQ drops or
   * dead-letters it). Default false: such a DLQ is refused with an
   * explanation, and its records are not listed.
   */
  readonly allowCountedReads?: boolean;
  /**
   * Where the journal of running actions lives (one small file per broker and
   * DLQ, gone when the action ends). A redrive or delete killed midway leaves
   * its file, and the next start shows which records may be in two places and
   * offers to finish it. Default `~/.babelqueue/console`.
   */
  readonly journalDir?: string;
  /**
   * Also append every redrive, delete, purge and recovery to this file, one
   * JSON line each (who, filter, target, counts, ids or a digest). Every action
   * is logged at info whether or not; the Audit page reads this file when it
   * is given, else the entries of this run.
   */
  readonly auditLog?: string;
  /** The server's log lines (start, actions, errors; never a message body). Default the core's console logger. */
  readonly logger?: Logger;
}

/** Authentication as configured. */
export type AuthSettings =
  | { readonly kind: 'none' }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'basic'; readonly username: string; readonly password: string };

/** The options checked, with defaults filled in. */
export interface ConsoleSettings {
  readonly transport: Transport;
  readonly dlqs: readonly string[];
  readonly host: string;
  readonly port: number;
  readonly readOnly: boolean;
  readonly auth: AuthSettings;
  readonly scanLimit: number;
  readonly scanBudgetMs: number;
  readonly sampleEveryMs: number;
  readonly idleMs: number;
  readonly allowCountedReads: boolean;
  readonly journalDir: string;
  readonly auditLog: string | undefined;
  readonly logger: Logger;
}

/** The default port: clear of 8080, where the lab's Pulsar (and many dev servers) answer. */
export const DEFAULT_PORT = 8794;

/** A read request answers after about this long (ms), whatever the DLQ holds: with a cursor when it did not finish. */
export const DEFAULT_SCAN_BUDGET_MS = 1500;

/** Rows a page holds at most. */
export const PAGE_MAX = 200;
/** A sorted page keeps at most this many rows while it scans. */
export const SORT_WINDOW = 5000;
/** Depth samples kept per DLQ. */
export const HISTORY_KEEP = 720;

/** True for a loopback address or `localhost`. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare);
}

/** Checks the options and fills in the defaults; a bad option is a {@link ConfigurationError}. */
export function resolveSettings(options: ConsoleOptions): ConsoleSettings {
  const { transport } = options;
  if (transport === undefined || typeof transport.consume !== 'function') throw new ConfigurationError('the console needs a transport');
  const name = (queue: string) => (transport.rules.dlqName ? transport.rules.dlqName(queue, undefined) : dlqName(queue));
  const named = [...(options.queues ?? []).map((q) => name(nonBlank('queue', q))), ...(options.dlqs ?? []).map((d) => nonBlank('dlq', d))];
  const dlqs = [...new Set(named.length > 0 ? named : [name('default')])];
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigurationError(`port must be an integer 0-65535, got ${String(port)}`);
  const auth = authOf(options);
  if (auth.kind === 'none' && !isLoopback(host)) {
    throw new ConfigurationError(`listening on ${host} (beyond loopback) needs authentication: give a token (--token, at least 16 characters) or basic auth (--basic-auth user:password)`);
  }
  return {
    transport,
    dlqs,
    host,
    port,
    readOnly: options.readOnly === true,
    auth,
    scanLimit: positive('scanLimit', options.scanLimit ?? 100_000),
    scanBudgetMs: positive('scanBudgetMs', options.scanBudgetMs ?? DEFAULT_SCAN_BUDGET_MS),
    sampleEveryMs: positive('sampleEveryMs', options.sampleEveryMs ?? 10_000),
    idleMs: positive('idleMs', options.idleMs ?? 1000),
    allowCountedReads: options.allowCountedReads === true,
    journalDir: options.journalDir ?? join(homedir(), '.babelqueue', 'console'),
    auditLog: auditLogOf(options.auditLog),
    logger: options.logger ?? consoleLogger(),
  };
}

function authOf(options: ConsoleOptions): AuthSettings {
  if (options.token !== undefined && options.basicAuth !== undefined) throw new ConfigurationError('give a token or basic auth, not both');
  if (options.token !== undefined) {
    if (typeof options.token !== 'string' || options.token.length < 16) throw new ConfigurationError('the console token must be at least 16 characters');
    return { kind: 'token', token: options.token };
  }
  if (options.basicAuth !== undefined) {
    const { username, password } = options.basicAuth;
    if (!username || !password || username.includes(':')) throw new ConfigurationError('basic auth needs a user name (without ":") and a password');
    return { kind: 'basic', username, password };
  }
  return { kind: 'none' };
}

function auditLogOf(file: string | undefined): string | undefined {
  if (file !== undefined && (typeof file !== 'string' || file.trim() === '')) throw new ConfigurationError('auditLog must be a file path');
  return file;
}

function nonBlank(what: string, value: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new ConfigurationError(`a ${what} name must not be blank`);
  return value;
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new ConfigurationError(`${name} must be an integer >= 1, got ${String(value)}`);
  return value;
}
