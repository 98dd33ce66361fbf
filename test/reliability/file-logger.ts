import { appendFileSync } from 'node:fs';
import type { Logger } from '@babelqueue/core';

/**
 * A logger that appends one line per event to a file (info and above), so a
 * run's worker logs can be read afterwards; `onLine` sees every line too.
 */
export function fileLogger(path: string, onLine?: (level: string, message: string) => void): Logger {
  const line = (level: string) => (fields: Record<string, unknown>, message: string) => {
    onLine?.(level, message);
    if (level === 'DEBUG') return;
    let extra = '';
    try {
      extra = Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : '';
    } catch {
      extra = ' {"fields":"unserializable"}';
    }
    appendFileSync(path, `${new Date().toISOString()} ${level} ${message}${extra}\n`);
  };
  return { debug: line('DEBUG'), info: line('INFO'), warn: line('WARN'), error: line('ERROR') };
}
