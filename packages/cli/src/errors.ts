import type { Command } from './usage.js';

/** The exit codes of the `babelqueue` command. */
export const EXIT = {
  /** Done. */
  ok: 0,
  /** Operational error: broker unreachable, missing binding package, record not found, … */
  operational: 1,
  /** Usage error: unknown command or option, bad value, missing argument. */
  usage: 2,
} as const;

/** The command line is wrong; the CLI prints the message and the command's short usage, and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(message: string, readonly command: Command = 'main') {
    super(message);
  }
}

/** An expected failure (not a bug): printed as one line without a stack, exit 1. */
export class OperationalError extends Error {
  override readonly name = 'OperationalError';
}
