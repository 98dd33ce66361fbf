import { deadLetterBlock, describeError } from '../dead-letter/block.js';
import { poisonRecord } from '../dead-letter/poison.js';
import { reemit } from '../reemit/edit.js';
import type { DeadLetterReason, Decision } from '../settlement/decision.js';
import type { Outcome } from '../settlement/outcome.js';
import { decide } from '../settlement/policy.js';
import type { PolicyConfig } from '../settlement/policy-config.js';
import type { Verdict } from '../settlement/verdict.js';
import { DeadLetterWriteError, type Delivery, type Transport } from '../transport/transport.js';
import { classifyBody } from './classify.js';
import type { Logger } from './logger.js';
import type { Handler, Message } from './message.js';

/** A failure the `onFailed` hook is told about, before the message is dead-lettered or dropped. */
export interface FailedEvent {
  readonly message: Message;
  readonly error: unknown;
  readonly reason: 'failed' | 'unknown_urn';
}

/** A message acknowledged without a record, and why. */
export interface DropEvent {
  readonly queue: string;
  readonly why: string;
  readonly messageId?: string;
  readonly traceId?: string;
  readonly urn?: string;
}

/** What the processor needs from the App. */
export interface ProcessorContext {
  readonly transport: Transport;
  readonly handlers: ReadonlyMap<string, Handler>;
  readonly config: (queue: string) => PolicyConfig;
  readonly logger: Logger;
  readonly maxBodyBytes: number;
  readonly onFailed?: (event: FailedEvent) => unknown;
  readonly onDrop?: (event: DropEvent) => unknown;
}

interface Step {
  outcome: Outcome;
  counted: number;
  message?: Message;
  error?: unknown;
}

/**
 * Runs one delivery through the whole consume path — version gate, decode
 * (poison?), reconcile attempts, route by URN, handler — and settles it with
 * the one decision the policy gives. Never throws: a settlement the broker
 * refuses is logged and left to the broker's redelivery (at-least-once).
 */
export async function processDelivery(delivery: Delivery, ctx: ProcessorContext): Promise<void> {
  try {
    await settleOne(delivery, ctx);
  } catch (error) {
    // A bug or a value no record can hold must not stop the worker or lose the message.
    const ids = { queue: delivery.queue, bytes: delivery.body.length };
    ctx.logger.error({ ...ids, error: describe(error) }, 'unexpected error while settling; message left for redelivery');
    await settleQuietly(delivery, { kind: 'unsettled', why: 'unexpected error' }, ctx, ids);
  }
}

async function settleOne(delivery: Delivery, ctx: ProcessorContext): Promise<void> {
  const step = await run(delivery, ctx);
  const config = ctx.config(delivery.queue);
  const verdict = decide({
    outcome: step.outcome,
    counted: step.counted,
    config,
    rules: ctx.transport.rules,
    capabilities: ctx.transport.capabilities,
  });
  const ids = identify(delivery, step);
  if (isTerminalFailure(verdict, step, config)) await hook(ctx, step);
  report(ctx, verdict, step, ids);
  const decision = toDecision(verdict, delivery, step);
  try {
    await delivery.settle(decision);
  } catch (error) {
    if (error instanceof DeadLetterWriteError) {
      ctx.logger.error({ ...ids, dlq: error.queue, error: describe(error.cause) }, 'dead-letter write failed; message left for redelivery');
      await settleQuietly(delivery, { kind: 'unsettled', why: 'dead-letter write failed' }, ctx, ids);
      return;
    }
    ctx.logger.error({ ...ids, decision: decision.kind, error: describe(error) }, 'settlement failed; the broker will redeliver');
  }
}

async function run(delivery: Delivery, ctx: ProcessorContext): Promise<Step> {
  const gate = delivery.nativeSchemaVersion;
  if (gate !== undefined && gate !== '1') {
    return { outcome: { kind: 'version-gated', value: gate }, counted: delivery.reconcileAttempts(0) + 1 };
  }
  const classified = delivery.poison !== undefined
    ? { kind: 'poison' as const, why: delivery.poison }
    : classifyBody(delivery.body, ctx.maxBodyBytes, (text, pointer) =>
        ctx.logger.warn({ queue: delivery.queue, pointer }, `decode warning: ${text}`));
  if (classified.kind === 'poison') {
    return { outcome: classified, counted: delivery.reconcileAttempts(0) + 1 };
  }
  const { envelope, urn } = classified;
  const counted = delivery.reconcileAttempts(envelope.attempts) + 1;
  const message: Message = {
    urn,
    traceId: envelope.trace_id,
    id: typeof envelope.meta.id === 'string' ? envelope.meta.id : '',
    queue: delivery.queue,
    attempts: counted,
    headers: delivery.headers,
    envelope,
    data: envelope.data,
    body: delivery.body,
  };
  const handler = ctx.handlers.get(urn);
  if (handler === undefined) return { outcome: { kind: 'unknown-urn', urn }, counted, message };
  try {
    await handler(envelope.data, message);
    return { outcome: { kind: 'handled' }, counted, message };
  } catch (error) {
    return { outcome: { kind: 'failed', error }, counted, message, error };
  }
}

function toDecision(verdict: Verdict, delivery: Delivery, step: Step): Decision {
  if (verdict.kind !== 'dead-letter') return verdict;
  const { queue, reason } = verdict;
  if (reason === 'version_gate') return { kind: 'dead-letter', queue, reason, record: delivery.body };
  const context = {
    originalQueue: delivery.queue,
    attempts: step.counted,
    error: errorText(step, reason),
    exception: describeError(step.error).exception,
  };
  const record = reason === 'poison'
    ? poisonRecord(delivery.body, context)
    // The delivered bytes with the counted attempt at the top level too, as the
    // spec's example record and the other SDKs write it; nothing else changes.
    : reemit(delivery.body, { attempts: step.counted, deadLetter: deadLetterBlock({ reason, ...context }) });
  return { kind: 'dead-letter', queue, reason, record };
}

function errorText(step: Step, reason: DeadLetterReason): string | null {
  if (step.outcome.kind === 'poison') return step.outcome.why;
  if (reason === 'unknown_urn' && step.outcome.kind === 'unknown-urn') return `no handler for ${step.outcome.urn}`;
  return describeError(step.error).error;
}

/** A handler failure, or an unknown URN under fail/release, that will not be retried again. */
function isTerminalFailure(verdict: Verdict, step: Step, config: PolicyConfig): boolean {
  if (verdict.kind !== 'dead-letter' && verdict.kind !== 'drop') return false;
  if (step.outcome.kind === 'failed') return true;
  return step.outcome.kind === 'unknown-urn' && (config.onUnknownUrn === 'fail' || config.onUnknownUrn === 'release');
}

async function hook(ctx: ProcessorContext, step: Step): Promise<void> {
  if (ctx.onFailed === undefined || step.message === undefined) return;
  const reason = step.outcome.kind === 'failed' ? 'failed' : 'unknown_urn';
  try {
    await ctx.onFailed({ message: step.message, error: step.error, reason });
  } catch (error) {
    ctx.logger.error({ messageId: step.message.id, error: describe(error) }, 'onFailed hook threw; settling anyway');
  }
}

function report(ctx: ProcessorContext, verdict: Verdict, step: Step, ids: Record<string, unknown>): void {
  const { logger } = ctx;
  switch (verdict.kind) {
    case 'ack':
      logger.debug(ids, 'handled');
      return;
    case 'retry':
      logger.warn({ ...ids, delayMs: verdict.delayMs, error: describe(step.error) }, retryText(step));
      return;
    case 'dead-letter':
      logger.warn({ ...ids, dlq: verdict.queue, reason: verdict.reason, error: describe(step.error) }, 'dead-lettering');
      return;
    case 'drop':
      logger.warn({ ...ids, why: verdict.why }, 'dropped');
      void Promise.resolve()
        .then(() => ctx.onDrop?.({ queue: String(ids.queue), why: verdict.why, ...optionalIds(step) }))
        .catch((error: unknown) => logger.error({ error: describe(error) }, 'onDrop hook threw'));
      return;
    case 'unsettled':
      logger.error({ ...ids, why: verdict.why, error: describe(step.error) }, 'left unsettled for redelivery');
      return;
    case 'native-dead-letter':
      logger.warn({ ...ids, why: verdict.why }, "left to the broker's native dead-letter handling");
      return;
  }
}

function retryText(step: Step): string {
  switch (step.outcome.kind) {
    case 'unknown-urn':
      return `no handler for ${step.outcome.urn}; retrying`;
    case 'poison':
      return `poison (${step.outcome.why}); retrying`;
    default:
      return 'handler failed; retrying';
  }
}

function identify(delivery: Delivery, step: Step): Record<string, unknown> {
  return { queue: delivery.queue, attempt: step.counted, bytes: delivery.body.length, ...optionalIds(step) };
}

function optionalIds(step: Step): { messageId?: string; traceId?: string; urn?: string } {
  if (step.message === undefined) return {};
  return { messageId: step.message.id, traceId: step.message.traceId, urn: step.message.urn };
}

async function settleQuietly(delivery: Delivery, decision: Decision, ctx: ProcessorContext, ids: Record<string, unknown>) {
  try {
    await delivery.settle(decision);
  } catch (error) {
    ctx.logger.error({ ...ids, error: describe(error) }, 'could not leave the delivery unsettled cleanly');
  }
}

/** An error as a short text for a log line (never a body). */
export function describe(error: unknown): string | undefined {
  if (error === undefined) return undefined;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
