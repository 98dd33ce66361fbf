import type { Rng } from './rng.js';

/** The URN of the chaos loop's messages. */
export const JOB_URN = 'urn:babel:reliability:job';
/** The URN of fuzzed bodies that are valid envelopes. */
export const FUZZ_URN = 'urn:babel:reliability:fuzz';

/** Total deliveries a message gets (the App's maxAttempts). */
export const MAX_ATTEMPTS = 3;

/**
 * What a message's handler does, carried in its data (`data.s`):
 * `ok` succeeds; `f1` / `f2` fail on their first one / two attempts and then
 * succeed (retries under fire); `x` always fails, so it must end on the DLQ
 * with `reason: failed` (dead-letter writes under fire). Kills only raise the
 * counted attempt, so a script's end is the same however often it is killed.
 */
export type Script = 'ok' | 'f1' | 'f2' | 'x';

/** The mix of scripts in a run. */
export const SCRIPT_WEIGHTS: Readonly<Record<Script, number>> = { ok: 80, f1: 8, f2: 6, x: 6 };

/** Whether the handler fails on this counted attempt. */
export function failsAt(script: Script, attempt: number): boolean {
  switch (script) {
    case 'ok':
      return false;
    case 'f1':
      return attempt <= 1;
    case 'f2':
      return attempt <= 2;
    case 'x':
      return true;
  }
}

/** How a script must end: handled, or on the DLQ as `failed`. */
export function expectedEnd(script: Script): 'handled' | 'dead-lettered' {
  return script === 'x' ? 'dead-lettered' : 'handled';
}

/** The scripts of `n` messages, keyed `0`…`n-1`. */
export function planScripts(rng: Rng, n: number): Script[] {
  return Array.from({ length: n }, () => rng.weighted(SCRIPT_WEIGHTS));
}

export function isScript(value: unknown): value is Script {
  return value === 'ok' || value === 'f1' || value === 'f2' || value === 'x';
}
