import type { Logger } from '@babelqueue/core';
import { Logger as NestLogger } from '@nestjs/common';

/**
 * Core's pino-style log lines (`fields, message`) through Nest's `Logger`, so
 * they take the application's logger, format and levels (`app.useLogger`,
 * `logLevels`). The fields follow the message as JSON; they never hold a body.
 */
export function nestLogger(context: string): Logger {
  const logger = new NestLogger(context);
  const line = (message: string, fields: Record<string, unknown>) =>
    Object.keys(fields).length === 0 ? message : `${message} ${fieldsJson(fields)}`;
  return {
    debug: (fields, message) => logger.debug(line(message, fields)),
    info: (fields, message) => logger.log(line(message, fields)),
    warn: (fields, message) => logger.warn(line(message, fields)),
    error: (fields, message) => logger.error(line(message, fields)),
  };
}

function fieldsJson(fields: Record<string, unknown>): string {
  try {
    return JSON.stringify(fields, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
  } catch {
    return '{"fields":"<not serialisable>"}';
  }
}
