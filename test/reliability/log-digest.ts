import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The distinct ERROR and WARN messages a row's processes logged (worker and
 * controller logs under `dir`), errors first, each most frequent first, with counts: what a
 * failed row's CI log needs to say why, when only its tail is kept. The logs
 * never hold a body, so neither does the digest.
 */
export function logDigest(dir: string, limit = 10): string[] {
  const counts = new Map<string, { count: number; file: string; error: string | undefined }>();
  for (const file of logFiles(dir)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const match = / (ERROR|WARN) ([^{]*)(.*)/.exec(line);
      if (match === null) continue;
      const key = `${match[1]} ${match[2]!.trim()}`;
      const seen = counts.get(key);
      if (seen === undefined) counts.set(key, { count: 1, file: file.slice(dir.length + 1), error: match[1] === 'ERROR' ? errorField(match[3]!) : undefined });
      else seen.count += 1;
    }
  }
  return [...counts].sort((a, b) => rank(a[0]) - rank(b[0]) || b[1].count - a[1].count).slice(0, limit)
    .map(([message, { count, file, error }]) => `${count}× ${message} (first in ${file}${error === undefined ? '' : `: ${error}`})`);
}

/** The `error` field of a line's fields (an error's name and message, never a body), when it has one. */
function errorField(fields: string): string | undefined {
  try {
    const error = (JSON.parse(fields) as { error?: unknown }).error;
    return typeof error === 'string' ? error.slice(0, 300) : undefined;
  } catch {
    return undefined;
  }
}

const rank = (key: string) => (key.startsWith('ERROR') ? 0 : 1);

function logFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return logFiles(path);
    return name.endsWith('.log') ? [path] : [];
  });
}
