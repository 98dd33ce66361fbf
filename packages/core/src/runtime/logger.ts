/**
 * The logging seam: pino-compatible (`logger.warn({ fields }, 'message')`), so
 * a pino or bunyan instance can be passed as is. The runtime never puts a
 * message body in a log line, only identifiers, reasons and sizes.
 */
export interface Logger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  /**
   * Optional, as pino has it: false for a level that writes nothing, so the
   * runtime can skip building the fields of a line nobody reads (the per-message
   * debug line). Without it, every line is built and passed on.
   */
  isLevelEnabled?(level: string): boolean;
}

type Level = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * The default logger: one line per event on stderr, `[babelqueue] LEVEL message {fields}`.
 * `BABELQUEUE_LOG_LEVEL` (debug | info | warn | error | silent) sets the threshold; default info.
 */
export function consoleLogger(level: Level | 'silent' = defaultLevel()): Logger {
  const threshold = level === 'silent' ? Infinity : RANK[level];
  const line = (at: Level) => (fields: Record<string, unknown>, message: string) => {
    if (RANK[at] < threshold) return;
    const extra = Object.keys(fields).length > 0 ? ` ${safeJson(fields)}` : '';
    process.stderr.write(`[babelqueue] ${at.toUpperCase()} ${message}${extra}\n`);
  };
  return {
    debug: line('debug'),
    info: line('info'),
    warn: line('warn'),
    error: line('error'),
    isLevelEnabled: (at: string) => Object.hasOwn(RANK, at) && RANK[at as Level] >= threshold,
  };
}

/** False only when the logger says debug lines are off (see {@link Logger.isLevelEnabled}). */
export function isDebugOn(logger: Logger): boolean {
  return logger.isLevelEnabled === undefined || logger.isLevelEnabled('debug');
}

/** A logger that discards everything (tests, benchmarks). */
export const silentLogger: Logger = consoleLogger('silent');

function defaultLevel(): Level | 'silent' {
  const env = process.env.BABELQUEUE_LOG_LEVEL;
  return env === 'debug' || env === 'info' || env === 'warn' || env === 'error' || env === 'silent' ? env : 'info';
}

function safeJson(fields: Record<string, unknown>): string {
  try {
    return JSON.stringify(fields, (_key, value: unknown) =>
      value instanceof Error ? { name: value.name, message: value.message } : value,
    );
  } catch {
    return '{"fields":"unserializable"}';
  }
}
