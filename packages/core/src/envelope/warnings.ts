import type { WarningHandler } from './types.js';

let processWide: WarningHandler | null = null;

/**
 * Installs the process-wide decode warning sink; `null` restores the default
 * (`process.emitWarning`). A per-call sink passed to `decode` wins over it.
 */
export function setWarningHandler(handler: WarningHandler | null): void {
  processWide = handler;
}

/** Reports one decode warning to the per-call sink, else the process-wide one, else `process.emitWarning`. */
export function warn(perCall: WarningHandler | undefined, message: string, pointer: string): void {
  const sink = perCall ?? processWide;
  if (sink !== null) sink(message, pointer);
  else process.emitWarning(message, { type: 'BabelQueueWarning', code: 'BABELQUEUE_DECODE', detail: `pointer: ${pointer}` });
}
