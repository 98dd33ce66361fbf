import type { Logger } from '@babelqueue/core';

/** One log call as it was made. */
export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields: Record<string, unknown>;
}

/** A Logger that records every line (and never prints), for assertions on what was (not) logged. Shared by every package's tests. */
export function captureLogger(): Logger & { lines: LogLine[]; text(): string } {
  const lines: LogLine[] = [];
  const at = (level: LogLine['level']) => (fields: Record<string, unknown>, message: string) => {
    lines.push({ level, message, fields });
  };
  return {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    text: () => lines.map((l) => `${l.level} ${l.message} ${JSON.stringify(l.fields)}`).join('\n'),
  };
}
