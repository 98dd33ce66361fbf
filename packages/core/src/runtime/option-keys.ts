import { ConfigurationError } from './errors.js';

/**
 * Refuses keys an options object does not know, as TypeScript does at compile
 * time, so a plain-JavaScript typo (`queu: 'orders'`) fails at start-up instead
 * of silently using a default. Suggests the closest known key.
 */
export function checkOptionKeys(what: string, options: unknown, known: readonly string[]): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ConfigurationError(`${what} must be an object, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}`);
  }
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const near = closestName(key, known);
    throw new ConfigurationError(`${what}: unknown option "${key}"${near === undefined ? '' : ` (did you mean "${near}"?)`}; known: ${known.join(', ')}`);
  }
}

/**
 * The known name closest to `name` (Levenshtein distance, case-insensitive), when it is
 * close enough to be a typo: at most a third of its length, never more than 2 edits for a
 * short one. Shared by option checks here and the CLI's unknown-option advice.
 */
export function closestName(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const candidate of known) {
    const d = distance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance (short option names only). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row.push(Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1)));
    }
    previous = row;
  }
  return previous[b.length] as number;
}
