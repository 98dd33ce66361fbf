import type { TransportCapabilities } from '../transport/transport.js';
import type { BindingRules } from './binding-rules.js';
import type { RetryRule } from './decision.js';
import type { Outcome } from './outcome.js';
import { retryDelayMs } from '../retry/backoff.js';
import type { PolicyConfig, RetryBackoff } from './policy-config.js';
import type { Verdict } from './verdict.js';

/** Everything the policy reads besides the outcome. */
export interface PolicyInput {
  readonly outcome: Outcome;
  /** The counted attempt: reconciled attempts + 1 (1 on a first delivery). */
  readonly counted: number;
  readonly config: PolicyConfig;
  readonly rules: BindingRules;
  readonly capabilities: Pick<TransportCapabilities, 'retry' | 'delayedRetry' | 'delayedPublish'>;
}

/** Every handled message's verdict: one frozen object, not one per message. */
const ACK: Verdict = Object.freeze({ kind: 'ack' });

/**
 * The one settlement policy for every binding: a pure function from what
 * happened to one decision. Each branch cites the rule it implements; the
 * data tables under `conformance/settlement/` exercise every row.
 */
export function decide(input: PolicyInput): Verdict {
  const { outcome } = input;
  switch (outcome.kind) {
    case 'handled':
      return ACK;
    case 'version-gated':
      return versionGated(input, outcome.value);
    case 'poison':
      return poison(input, outcome.why);
    case 'unknown-urn':
      return unknownUrn(input, outcome.urn);
    case 'failed':
      return outcome.unrecoverable === true
        ? unrecoverable(input)
        : boundedRetry(input, 'failed', () => ({ delayMs: retryDelay(input, input.config.retryBackoff), rule: 'retry' }));
    case 'interrupted':
      return { kind: 'unsettled', why: 'the worker shut down before the handler finished' };
  }
}

/**
 * Version gate (seed 000, SQS/ASB/Pulsar/Artemis; seed 002): never a handler
 * or the unknown-URN path; written raw to the DLQ on the first delivery. With
 * no DLQ the binding's rule applies: Kafka's gate takes the §6.5 poison path
 * (a bounded retry through the tiers, so a newer consumer of the group can
 * still take it during a rolling upgrade), the others settle it at once.
 */
function versionGated(input: PolicyInput, value: string): Verdict {
  const { config, rules } = input;
  const why = `unsupported native schema version "${value}"`;
  if (config.onUnknownUrn === 'delete') return { kind: 'drop', why: `${why}; on_unknown_urn is delete`, chosen: true };
  if (config.deadLetterQueue !== undefined) {
    return { kind: 'dead-letter', queue: config.deadLetterQueue, reason: 'version_gate' };
  }
  switch (rules.versionGateWithoutDeadLetter) {
    case 'native':
      return { kind: 'native-dead-letter', why: `${why}; dead-lettering is off` };
    case 'bounded-retry':
      if (!input.capabilities.retry) return { kind: 'drop', why: `${why}; no retry path and no DLQ` };
      return exhaustedOr(input, why, () => ({
        kind: 'retry',
        delayMs: retryDelay(input, config.retryBackoff),
        attempts: input.counted,
        rule: 'retry',
      }));
    case 'drop':
    case 'none': // a binding without a gate never reports one (the runtime does not gate it)
      return { kind: 'drop', why: `${why}; dead-lettering is off` };
  }
}

/**
 * Poison never reaches a handler and is never the unknown-URN path. With a DLQ
 * it is written there at once; without one the binding's rule applies.
 */
function poison(input: PolicyInput, why: string): Verdict {
  const { config, rules } = input;
  if (config.onUnknownUrn === 'delete' && rules.deleteStrategyDropsPoison) {
    return { kind: 'drop', why: `poison (${why}); on_unknown_urn is delete`, chosen: true };
  }
  if (config.deadLetterQueue !== undefined) {
    return { kind: 'dead-letter', queue: config.deadLetterQueue, reason: 'poison' };
  }
  switch (rules.poisonWithoutDeadLetter) {
    case 'dead-letter-default':
      // Redis: a DLQ opt-out never covers poison.
      return { kind: 'dead-letter', queue: config.defaultDeadLetterQueue, reason: 'poison' };
    case 'native':
      return { kind: 'native-dead-letter', why: `poison (${why}); dead-lettering is off` };
    case 'drop':
      return { kind: 'drop', why: `poison (${why}); dead-lettering is off` };
    case 'bounded-retry':
      if (!input.capabilities.retry) return { kind: 'drop', why: `poison (${why}); no retry path and no DLQ` };
      return exhaustedOr(input, `poison (${why})`, () => ({
        kind: 'retry',
        delayMs: retryDelay(input, config.retryBackoff),
        attempts: input.counted,
        rule: 'retry',
      }));
  }
}

function unknownUrn(input: PolicyInput, urn: string): Verdict {
  const { config } = input;
  switch (config.onUnknownUrn) {
    case 'delete':
      return { kind: 'drop', why: `no handler for ${urn}; on_unknown_urn is delete`, chosen: true };
    case 'dead_letter':
      return config.deadLetterQueue !== undefined
        ? { kind: 'dead-letter', queue: config.deadLetterQueue, reason: 'unknown_urn' }
        : { kind: 'drop', why: `no handler for ${urn}; dead_letter degrades to delete (dead-lettering is off)` };
    case 'release':
      return boundedRetry(input, 'unknown_urn', () => releaseDelay(input));
    case 'fail':
      return boundedRetry(input, 'unknown_urn', () => ({ delayMs: retryDelay(input, config.retryBackoff), rule: 'retry' }));
  }
}

/**
 * A release asks for the configured release delay: a delay (seed 000, Kafka
 * retry topics; FACTS §6), which a binding honours when it can delay a retry
 * or a publish (Kafka: a tier topic). A binding that can do neither (the Redis
 * legacy layout) ignores it. A release without a delay is delivered again like
 * a failure: the retry rule.
 */
function releaseDelay({ config, capabilities }: PolicyInput): { delayMs: number; rule: RetryRule } {
  const canDelay = capabilities.delayedRetry || capabilities.delayedPublish;
  const delayMs = canDelay ? config.unknownUrnReleaseDelayMs : 0;
  return { delayMs, rule: delayMs > 0 ? 'delay' : 'retry' };
}

/**
 * A failing handler, and fail/release of an unknown URN: retried while the
 * counted attempt is below max attempts (0 = no cap), then dead-lettered with
 * the counted attempt, or dropped when dead-lettering is off.
 */
function boundedRetry(input: PolicyInput, reason: 'failed' | 'unknown_urn', again: () => { delayMs: number; rule: RetryRule }): Verdict {
  const dlq = input.config.deadLetterQueue;
  // Without a retry path (capabilities.retry false) a failure below the cap raises:
  // the record stays uncommitted. At the cap the terminal decision still holds.
  const retry = (): Verdict => input.capabilities.retry
    ? { kind: 'retry', attempts: input.counted, ...again() }
    : { kind: 'unsettled', why: 'the transport has no retry path' };
  return exhaustedOr(
    input,
    reason === 'failed' ? 'handler failed' : 'no handler for the URN',
    retry,
    dlq === undefined ? undefined : { kind: 'dead-letter', queue: dlq, reason },
  );
}

/** An `UnrecoverableError`: the remaining attempts are skipped; dead-lettered at once, or dropped when dead-lettering is off. */
function unrecoverable({ config }: PolicyInput): Verdict {
  return config.deadLetterQueue !== undefined
    ? { kind: 'dead-letter', queue: config.deadLetterQueue, reason: 'failed' }
    : { kind: 'drop', why: 'handler threw an UnrecoverableError and dead-lettering is off' };
}

function exhaustedOr(input: PolicyInput, what: string, retry: () => Verdict, atCap?: Verdict): Verdict {
  const { maxAttempts } = input.config;
  if (maxAttempts === 0 || input.counted < maxAttempts) return retry();
  return atCap ?? { kind: 'drop', why: `${what}; attempt ${input.counted} of ${maxAttempts} and dead-lettering is off` };
}

function retryDelay(input: PolicyInput, backoff: RetryBackoff): number {
  return input.capabilities.delayedRetry ? retryDelayMs(input.counted, backoff) : 0;
}
