import { dlqName } from '../dead-letter/naming.js';
import { resolveRetryBackoff } from '../retry/backoff.js';
import type { PolicyConfig, RetryBackoff } from '../settlement/policy-config.js';
import { isUnknownUrnStrategy, type UnknownUrnStrategyValue } from '../settlement/unknown-urn-strategy.js';
import type { Transport } from '../transport/transport.js';
import type { AppOptions, DeadLetterOptions } from './app-options.js';
import { ConfigurationError } from './errors.js';
import { consoleLogger, type Logger } from './logger.js';
import type { Instrumentation } from './instrumentation.js';
import { checkOptionKeys } from './option-keys.js';

/** {@link AppOptions} checked, with the defaults filled in. */
export interface AppSettings {
  readonly transport: Transport;
  readonly queue: string;
  readonly maxAttempts: number;
  readonly onUnknownUrn: UnknownUrnStrategyValue;
  readonly deadLetter: DeadLetterOptions | undefined;
  readonly retryBackoff: RetryBackoff;
  /** The user set a backoff that can delay a retry (base above 0). */
  readonly retryBackoffSet: boolean;
  readonly maxBodyBytes: number;
  readonly handlerTimeoutMs: number | undefined;
  readonly shutdownTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly logger: Logger;
  readonly instrumentation: Instrumentation | undefined;
  /** The settlement configuration for a consumed queue; refuses a DLQ that is the queue itself. */
  policyConfig(queue: string): PolicyConfig;
}

const APP_KEYS = [
  'transport', 'queue', 'maxAttempts', 'onUnknownUrn', 'unknownUrnReleaseDelayMs', 'deadLetter', 'retryBackoff',
  'maxBodyBytes', 'handlerTimeoutMs', 'shutdownTimeoutMs', 'connectTimeoutMs', 'logger', 'onFailed', 'onDrop',
  'instrumentation',
] as const;

/** Checks every option of `createApp` and fills in the defaults. */
export function resolveSettings(options: AppOptions): AppSettings {
  if (options === undefined || options === null) throw new ConfigurationError('createApp needs options with a transport');
  checkOptionKeys('createApp', options, APP_KEYS);
  const transport = options.transport;
  if (transport === undefined || transport === null || typeof transport.consume !== 'function' || typeof transport.publish !== 'function') {
    throw new ConfigurationError('createApp needs a transport (for example new InMemoryTransport())');
  }
  const queue = options.queue ?? 'default';
  if (typeof queue !== 'string' || queue.trim() === '') {
    throw new ConfigurationError(`queue must be a non-blank string, got ${queue === null ? 'null' : typeof queue === 'string' ? '""' : typeof queue}`);
  }
  const maxAttempts = options.maxAttempts ?? 3;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 0) {
    throw new ConfigurationError(`maxAttempts must be an integer >= 0 (0 = no cap), got ${String(maxAttempts)}`);
  }
  const onUnknownUrn = options.onUnknownUrn ?? 'fail';
  if (!isUnknownUrnStrategy(onUnknownUrn)) {
    throw new ConfigurationError(`onUnknownUrn must be fail, delete, release or dead_letter, got ${String(onUnknownUrn)}`);
  }
  checkOptionKeys('retryBackoff', options.retryBackoff, ['baseMs', 'multiplier', 'maxMs']);
  let retryBackoff: RetryBackoff;
  try {
    retryBackoff = resolveRetryBackoff(options.retryBackoff);
  } catch (error) {
    throw new ConfigurationError((error as Error).message);
  }
  const deadLetter = deadLetterOptions(options.deadLetter);
  const unknownUrnReleaseDelayMs = nonNegative('unknownUrnReleaseDelayMs', options.unknownUrnReleaseDelayMs ?? 0);
  const dlqFor = (name: string, explicit: string | undefined, suffix: string | undefined): string =>
    explicit ?? (transport.rules.dlqName ? transport.rules.dlqName(name, suffix) : dlqName(name, { suffix }));
  return {
    transport,
    queue,
    maxAttempts,
    onUnknownUrn,
    deadLetter,
    retryBackoff,
    retryBackoffSet: retryBackoff.baseMs > 0 && retryBackoff.maxMs > 0,
    maxBodyBytes: options.maxBodyBytes === undefined ? Infinity : nonNegative('maxBodyBytes', options.maxBodyBytes),
    handlerTimeoutMs: options.handlerTimeoutMs === undefined ? undefined : positiveMs('handlerTimeoutMs', options.handlerTimeoutMs),
    shutdownTimeoutMs: nonNegative('shutdownTimeoutMs', options.shutdownTimeoutMs ?? 25_000),
    connectTimeoutMs: positiveMs('connectTimeoutMs', options.connectTimeoutMs ?? 10_000),
    logger: options.logger ?? consoleLogger(),
    instrumentation: instrumentation(options.instrumentation),
    policyConfig(name) {
      const deadLetterQueue = deadLetter === undefined ? undefined : dlqFor(name, deadLetter.queue, deadLetter.suffix);
      if (deadLetterQueue === name) {
        throw new ConfigurationError(`the dead-letter queue of "${name}" is "${name}" itself: records would loop back into the work queue forever; set deadLetter.queue or deadLetter.suffix to another queue`);
      }
      return {
        maxAttempts,
        onUnknownUrn,
        deadLetterQueue,
        defaultDeadLetterQueue: dlqFor(name, undefined, undefined),
        retryBackoff,
        unknownUrnReleaseDelayMs,
      };
    },
  };
}

function deadLetterOptions(value: AppOptions['deadLetter']): DeadLetterOptions | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return {};
  checkOptionKeys('deadLetter', value, ['queue', 'suffix', 'stack']);
  if (value.stack !== undefined && typeof value.stack !== 'boolean') throw new ConfigurationError('deadLetter.stack must be true or false');
  if (value.queue !== undefined && (typeof value.queue !== 'string' || value.queue.trim() === '')) {
    throw new ConfigurationError('deadLetter.queue must be a non-blank queue name');
  }
  if (value.suffix !== undefined && (typeof value.suffix !== 'string' || value.suffix === '')) {
    throw new ConfigurationError('deadLetter.suffix must be a non-empty string: an empty suffix makes every queue its own dead-letter queue');
  }
  return value;
}

function nonNegative(name: string, value: number): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw new ConfigurationError(`${name} must be a number >= 0, got ${String(value)}`);
  }
  return value;
}

function positiveMs(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new ConfigurationError(`${name} must be a positive number of milliseconds, got ${String(value)}`);
  }
  return value;
}

function instrumentation(value: Instrumentation | undefined): Instrumentation | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object') {
    throw new ConfigurationError(`instrumentation must be an object with publish and/or delivery hooks, got ${value === null ? 'null' : typeof value}`);
  }
  for (const hook of ['publish', 'delivery'] as const) {
    if (value[hook] !== undefined && typeof value[hook] !== 'function') {
      throw new ConfigurationError(`instrumentation.${hook} must be a function, got ${typeof value[hook]}`);
    }
  }
  return value;
}
