import type { DeadLetterReader, DeadLetterReadMode } from '@babelqueue/core';

/**
 * The console reads a DLQ with the core's dead-letter reader (the one the
 * CLI's `dlq list` uses): the binding's `scan`, a peek or a leased read, or
 * nothing (`none`: the page says so).
 */
export type RecordSource = DeadLetterReader;

/** How the console reads: the binding's scan kind, or `none`. */
export type ReadMode = DeadLetterReadMode;

export { CannotReadError, deadLetterReader as recordSource } from '@babelqueue/core';
