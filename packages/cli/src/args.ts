import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closestName } from '@babelqueue/core';
import { UsageError } from './errors.js';
import type { CliIo } from './io.js';
import type { Command } from './usage.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Options every command accepts. */
const GLOBAL_OPTIONS = {
  url: { type: 'string' },
  json: { type: 'boolean' },
  'timeout-ms': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

/** The settings every command reads. */
export interface GlobalSettings {
  readonly url: string;
  /** Where {@link url} came from: `--url`, `BABELQUEUE_URL`, or the default (`memory://`). */
  readonly urlFrom: 'option' | 'env' | 'default';
  /** The caller shares this process's `memory://` brokers (see {@link CliIo.sharesMemoryBrokers}). */
  readonly sharesMemoryBrokers: boolean;
  readonly json: boolean;
  readonly timeoutMs: number;
}

/** A command's parsed command line. */
export interface Args {
  readonly positionals: readonly string[];
  readonly global: GlobalSettings;
  /** `--help` was given. */
  readonly help: boolean;
  /** A string option's value. */
  string(name: string): string | undefined;
  /** Every value of a repeatable string option. */
  strings(name: string): string[];
  /** A boolean option: true when given. */
  flag(name: string): boolean;
  /** An integer option `>= min`, or a usage error. */
  integer(name: string, min?: number): number | undefined;
}

/** The default broker URL: everything runs in this process (only `demo` may use it from the command line). */
export const DEFAULT_URL = 'memory://';

/**
 * Parses `args` for `command` with the global options merged in; unknown
 * options and bad values are usage errors that carry the command's usage text.
 */
export function parse(command: Command, args: readonly string[], options: Options, io: CliIo): Args {
  let parsed;
  const known = { ...GLOBAL_OPTIONS, ...options };
  try {
    parsed = parseArgs({ args: [...args], options: known, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${cleanParseError(error)}${suggestion(error, Object.keys(known))}`, command);
  }
  const values = parsed.values as Record<string, string | boolean | (string | boolean)[] | undefined>;
  const string = (name: string) => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  const option = string('url');
  const env = nonBlank(io.env.BABELQUEUE_URL);
  const args_: Args = {
    positionals: parsed.positionals,
    help: values.help === true,
    global: {
      url: option ?? env ?? DEFAULT_URL,
      urlFrom: option !== undefined ? 'option' : env !== undefined ? 'env' : 'default',
      sharesMemoryBrokers: io.sharesMemoryBrokers === true,
      json: values.json === true,
      timeoutMs: 10_000,
    },
    string,
    strings: (name) => {
      const value = values[name];
      return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' ? [value] : [];
    },
    flag: (name) => values[name] === true,
    integer: (name, min = 0) => {
      const raw = string(name);
      return raw === undefined ? undefined : integer(command, `--${name}`, raw, min);
    },
  };
  const timeout = args_.integer('timeout-ms', 1);
  return timeout === undefined ? args_ : { ...args_, global: { ...args_.global, timeoutMs: timeout } };
}

/** An integer option value `>= min`, or a usage error naming the option. */
export function integer(command: Command, name: string, raw: string, min = 0): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isSafeInteger(value) || value < min) {
    throw new UsageError(`${name} must be an integer >= ${min}, got "${raw}"`, command);
  }
  return value;
}

/** Options of any command that take a value (the word after them is not a command). */
const VALUE_OPTIONS = new Set(['--url', '--timeout-ms', '--queue', '--dlq', '--max', '--id', '--to', '--idle-ms', '--trace-id', '--delay-ms', '--host', '--port', '--token', '--basic-auth', '--scan-limit', '--scan-budget-ms']);

/**
 * Splits `argv` at its first word that is neither an option nor an option's
 * value: the command (or subcommand), and everything else in order.
 */
export function splitCommand(argv: readonly string[]): { command: string | undefined; rest: string[] } {
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === '--') break;
    if (VALUE_OPTIONS.has(token)) {
      i++;
      continue;
    }
    if (token.startsWith('-')) continue;
    return { command: token, rest: [...argv.slice(0, i), ...argv.slice(i + 1)] };
  }
  return { command: undefined, rest: [...argv] };
}

function nonBlank(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** node's parseArgs messages carry hints about `--` and `=` spelling that do not help here. */
function cleanParseError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message
    .split(/\.\s+(?=To specify|If it|Did you)/)[0]!
    .replace(/\.$/, '');
}

/** ` (did you mean "--queue"?)` for an unknown option close to a known one, else "". */
function suggestion(error: unknown, known: readonly string[]): string {
  if ((error as { code?: unknown } | null)?.code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return '';
  const name = /Unknown option '--?([^'=]+)/.exec(error instanceof Error ? error.message : '')?.[1];
  const near = name === undefined ? undefined : closestName(name, known);
  return near === undefined ? '' : ` (did you mean "--${near}"?)`;
}
