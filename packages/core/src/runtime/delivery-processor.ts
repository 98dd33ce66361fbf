import { deadLetterBlock } from '../dead-letter/block.js';
import { poisonRecord } from '../dead-letter/poison.js';
import type { DeadLetterBlock } from '../envelope/types.js';
import { isVersionGated } from '../projection/version-gate.js';
import { reemit } from '../reemit/edit.js';
import { reconcileAttempts } from '../retry/reconcile.js';
import type { DeadLetterReason, Decision } from '../settlement/decision.js';
import type { Outcome } from '../settlement/outcome.js';
import { decide } from '../settlement/policy.js';
import type { PolicyConfig } from '../settlement/policy-config.js';
import type { Verdict } from '../settlement/verdict.js';
import { DeadLetterWriteError, type Delivery, type Transport } from '../transport/transport.js';
import { classifyBody } from './classify.js';
import { DeliveredMessage } from './delivered-message.js';
import { runHandler, type InterruptWatch } from './handler-run.js';
import type { DeliveryEnd, DeliveryScope, Instrumentation } from './instrumentation.js';
import { isDebugOn, type Logger } from './logger.js';
import type { Handler, Message } from './message.js';
import { thrownFields, thrownText, thrownType } from './thrown.js';

/** A failure the `onFailed` hook is told about, before the message is dead-lettered or dropped. */
export interface FailedEvent<TData = Record<string, unknown>> {
  /** `message.data` has the App's URN catalog type (`createApp<Catalog>`). */
  readonly message: Message<TData>;
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
  /** A handler still running after this long is aborted and failed (retry path). */
  readonly handlerTimeoutMs?: number;
  /**
   * Aborted when the worker's shutdown deadline passes: handlers still running
   * are interrupted and their deliveries left unsettled for redelivery.
   */
  readonly interrupt?: InterruptWatch;
  readonly onFailed?: (event: FailedEvent) => unknown;
  readonly onDrop?: (event: DropEvent) => unknown;
  /** Tracing / metrics hooks; absent, no hook code runs. */
  readonly instrumentation?: Instrumentation;
  /** Write a thrown Error's stack as `dead_letter.stack` (the App's `deadLetter.stack`). */
  readonly deadLetterStack?: boolean;
  /** Called each time the broker confirmed a settlement (the App's health). */
  readonly onSettled?: () => void;
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
 *
 * Not an async function: a delivery whose handler returned at once costs one
 * promise (the settlement's), not a chain of async frames.
 */
export function processDelivery(delivery: Delivery, ctx: ProcessorContext): Promise<void> {
  const scope = ctx.instrumentation?.delivery === undefined ? undefined : startScope(delivery, ctx);
  try {
    // A handler that returned synchronously gives its step without a promise hop.
    const step = run(delivery, ctx, scope);
    if (step instanceof Promise) {
      return step
        .then((done) => settleOne(delivery, ctx, scope, done))
        .then(undefined, (error: unknown) => unexpected(delivery, ctx, scope, error));
    }
    return settleOne(delivery, ctx, scope, step);
  } catch (error) {
    return unexpected(delivery, ctx, scope, error);
  }
}

/** A bug or a value no record can hold must not stop the worker or lose the message. */
async function unexpected(delivery: Delivery, ctx: ProcessorContext, scope: DeliveryScope | undefined, error: unknown): Promise<void> {
  const ids = { queue: delivery.queue, bytes: delivery.body.length };
  ctx.logger.error({ ...ids, ...thrownFields(error) }, 'unexpected error while settling; message left for redelivery');
  await settleQuietly(delivery, { kind: 'unsettled', why: 'unexpected error' }, ctx, ids);
  if (scope !== undefined) {
    endScope(scope, ctx, { queue: delivery.queue, outcome: 'unexpected-error', decision: 'unsettled', attempts: 0, error });
  }
}

/**
 * Decides and settles. What throws before the settlement is called is the
 * caller's to catch; the promise it returns only rejects if the logger throws.
 */
function settleOne(delivery: Delivery, ctx: ProcessorContext, scope: DeliveryScope | undefined, step: Step): Promise<void> {
  const config = ctx.config(delivery.queue);
  const verdict = decide({
    outcome: step.outcome,
    counted: step.counted,
    config,
    rules: ctx.transport.rules,
    capabilities: ctx.transport.capabilities,
  });
  if (isTerminalFailure(verdict, step, config)) {
    return hook(ctx, step)
      .then(() => execute(delivery, ctx, scope, step, verdict))
      .then(undefined, (error: unknown) => unexpected(delivery, ctx, scope, error));
  }
  return execute(delivery, ctx, scope, step, verdict);
}

/** Reports the verdict and has the transport execute it; a refused settlement is handled here. */
function execute(delivery: Delivery, ctx: ProcessorContext, scope: DeliveryScope | undefined, step: Step, verdict: Verdict): Promise<void> {
  report(ctx, verdict, step, delivery);
  const decision = toDecision(verdict, delivery, step, ctx.deadLetterStack === true);
  let settled: Promise<void>;
  try {
    settled = Promise.resolve(delivery.settle(decision)); // the same promise when settle returned a native one
  } catch (error) {
    return settleFailed(delivery, ctx, scope, step, verdict, decision, error);
  }
  const onSettled = ctx.onSettled;
  return settled.then(
    scope === undefined
      ? onSettled
      : () => {
        onSettled?.();
        endScope(scope, ctx, settledEnd(delivery, step, verdict, {}));
      },
    (error: unknown) => settleFailed(delivery, ctx, scope, step, verdict, decision, error),
  );
}

async function settleFailed(
  delivery: Delivery,
  ctx: ProcessorContext,
  scope: DeliveryScope | undefined,
  step: Step,
  verdict: Verdict,
  decision: Decision,
  error: unknown,
): Promise<void> {
  const ids = identify(delivery, step);
  if (error instanceof DeadLetterWriteError) {
    ctx.logger.error({ ...ids, dlq: error.queue, ...thrownFields(error.cause) }, 'dead-letter write failed; message left for redelivery');
    await settleQuietly(delivery, { kind: 'unsettled', why: 'dead-letter write failed' }, ctx, ids);
    if (scope !== undefined) endScope(scope, ctx, settledEnd(delivery, step, verdict, { decision: 'unsettled', deadLetterWriteFailed: true }));
    return;
  }
  ctx.logger.error({ ...ids, decision: decision.kind, ...thrownFields(error) }, 'settlement failed; the broker will redeliver');
  if (scope !== undefined) endScope(scope, ctx, settledEnd(delivery, step, verdict, { settleFailed: true }));
}

function startScope(delivery: Delivery, ctx: ProcessorContext): DeliveryScope | undefined {
  try {
    return ctx.instrumentation!.delivery!({ queue: delivery.queue, headers: delivery.headers, bytes: delivery.body.length });
  } catch (error) {
    ctx.logger.error({ queue: delivery.queue, ...thrownFields(error) }, 'instrumentation threw at the start of a delivery; ignored');
    return undefined;
  }
}

function endScope(scope: DeliveryScope, ctx: ProcessorContext, end: DeliveryEnd): void {
  try {
    scope.settled(end);
  } catch (error) {
    ctx.logger.error({ queue: end.queue, ...thrownFields(error) }, 'instrumentation threw after a settlement; ignored');
  }
}

/** The instrumentation's view of a settlement: the verdict the transport executed, with its reason. */
function settledEnd(
  delivery: Delivery,
  step: Step,
  verdict: Verdict,
  extra: { decision?: 'unsettled'; deadLetterWriteFailed?: boolean; settleFailed?: boolean },
): DeliveryEnd {
  const reason = verdict.kind === 'dead-letter' ? verdict.reason : verdict.kind === 'drop' ? dropReason(step) : undefined;
  return {
    queue: delivery.queue,
    outcome: step.outcome.kind,
    decision: extra.decision ?? verdict.kind,
    attempts: step.counted,
    ...(reason === undefined ? {} : { reason }),
    ...(step.message === undefined ? {} : { message: step.message }),
    ...(step.outcome.kind === 'failed' ? { error: step.outcome.error } : {}),
    ...(extra.deadLetterWriteFailed ? { deadLetterWriteFailed: true } : {}),
    ...(extra.settleFailed ? { settleFailed: true } : {}),
  };
}

/** The delivery's attempts by its binding's formula (`BindingRules.attempts`). */
function reconciled(delivery: Delivery, ctx: ProcessorContext, bodyAttempts: number): number {
  return reconcileAttempts(ctx.transport.rules.attempts, bodyAttempts, delivery.nativeAttempts);
}

function run(delivery: Delivery, ctx: ProcessorContext, scope: DeliveryScope | undefined): Step | Promise<Step> {
  const gate = delivery.nativeSchemaVersion;
  if (isVersionGated(gate) && ctx.transport.rules.versionGateWithoutDeadLetter !== 'none') {
    return { outcome: { kind: 'version-gated', value: gate }, counted: reconciled(delivery, ctx, 0) + 1 };
  }
  const classified = delivery.poison !== undefined
    ? { kind: 'poison' as const, why: delivery.poison }
    : classifyBody(delivery.body, ctx.maxBodyBytes, (text, pointer) =>
        ctx.logger.warn({ queue: delivery.queue, pointer }, `decode warning: ${text}`));
  if (classified.kind === 'poison') {
    return { outcome: classified, counted: reconciled(delivery, ctx, 0) + 1 };
  }
  const { envelope, urn } = classified;
  const counted = reconciled(delivery, ctx, envelope.attempts) + 1;
  const handler = ctx.handlers.get(urn);
  const message = new DeliveredMessage(
    urn,
    envelope.trace_id,
    typeof envelope.meta.id === 'string' ? envelope.meta.id : '',
    delivery.queue,
    counted,
    delivery,
    envelope,
    envelope.data,
    delivery.body,
  );
  if (handler === undefined) return { outcome: { kind: 'unknown-urn', urn }, counted, message };
  if (scope?.handle !== undefined) {
    return Promise.resolve(scope.handle(message, async () => runHandler(handler, message, ctx.handlerTimeoutMs, ctx.interrupt)))
      .then((settled) => handledStep(settled, counted, message));
  }
  const outcome = runHandler(handler, message, ctx.handlerTimeoutMs, ctx.interrupt);
  return outcome instanceof Promise
    ? outcome.then((settled) => handledStep(settled, counted, message))
    : handledStep(outcome, counted, message);
}

function handledStep(outcome: Outcome, counted: number, message: Message): Step {
  return outcome.kind === 'failed'
    ? { outcome, counted, message, error: outcome.error }
    : { outcome, counted, message };
}

function toDecision(verdict: Verdict, delivery: Delivery, step: Step, withStack: boolean): Decision {
  if (verdict.kind !== 'dead-letter') return verdict;
  const { queue, reason } = verdict;
  if (reason === 'version_gate') return { kind: 'dead-letter', queue, reason, record: delivery.body };
  const context = {
    originalQueue: delivery.queue,
    attempts: step.counted,
    error: errorText(step, reason),
    exception: thrownType(step.error),
  };
  const record = reason === 'poison'
    ? poisonRecord(delivery.body, context)
    // The delivered bytes with the counted attempt at the top level too, as the
    // spec's example record and the other SDKs write it; nothing else changes.
    : reemit(delivery.body, { attempts: step.counted, deadLetter: withStackOf(deadLetterBlock({ reason, ...context }), withStack ? step.error : undefined) });
  return { kind: 'dead-letter', queue, reason, record };
}

/** The block with the thrown Error's stack as an additive last member, when there is one. */
function withStackOf(block: DeadLetterBlock, thrown: unknown): DeadLetterBlock {
  return thrown instanceof Error && typeof thrown.stack === 'string' && thrown.stack !== '' ? { ...block, stack: thrown.stack } : block;
}

function errorText(step: Step, reason: DeadLetterReason): string | null {
  if (step.outcome.kind === 'poison') return step.outcome.why;
  if (reason === 'unknown_urn' && step.outcome.kind === 'unknown-urn') return `no handler for ${step.outcome.urn}`;
  if (step.outcome.kind === 'failed') return thrownText(step.outcome.error);
  return null;
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
    ctx.logger.error({ messageId: step.message.id, ...thrownFields(error) }, 'onFailed hook threw; settling anyway');
  }
}

function report(ctx: ProcessorContext, verdict: Verdict, step: Step, delivery: Delivery): void {
  const { logger } = ctx;
  if (verdict.kind === 'ack') {
    // The one line of a routine delivery: its fields are built only when a debug line is written.
    if (isDebugOn(logger)) logger.debug(identify(delivery, step), 'handled');
    return;
  }
  const ids = identify(delivery, step);
  const failure = step.outcome.kind === 'failed' ? thrownFields(step.outcome.error) : {};
  switch (verdict.kind) {
    case 'retry': {
      // One line per retry; the stack is logged once, when the message is dead-lettered or dropped.
      const { stack: _stack, ...brief } = failure as { stack?: string };
      logger.warn({ ...ids, delayMs: verdict.delayMs, ...brief }, retryText(step));
      return;
    }
    case 'dead-letter':
      logger.warn({ ...ids, dlq: verdict.queue, reason: verdict.reason, ...failure }, 'dead-lettering');
      return;
    case 'drop':
      // A drop the configuration chose (on_unknown_urn: delete) is routine; any
      // other drop loses the message, so it must be impossible to miss.
      if (verdict.chosen === true) logger.info({ ...ids, why: verdict.why }, 'dropped (on_unknown_urn: delete)');
      else logger.error({ ...ids, reason: dropReason(step), why: verdict.why, ...failure }, 'dropped: the message is gone (turn on deadLetter to keep such messages)');
      void Promise.resolve()
        .then(() => ctx.onDrop?.({ queue: String(ids.queue), why: verdict.why, ...optionalIds(step) }))
        .catch((error: unknown) => logger.error(thrownFields(error), 'onDrop hook threw'));
      return;
    case 'unsettled':
      if (step.outcome.kind === 'interrupted') logger.warn({ ...ids, why: verdict.why }, 'left unsettled for redelivery');
      else logger.error({ ...ids, why: verdict.why, ...failure }, 'left unsettled for redelivery');
      return;
    case 'native-dead-letter':
      logger.warn({ ...ids, why: verdict.why }, "left to the broker's native dead-letter handling");
      return;
  }
}

/** The `dead_letter.reason` a drop would have had with dead-lettering on. */
function dropReason(step: Step): string {
  switch (step.outcome.kind) {
    case 'failed':
      return 'failed';
    case 'unknown-urn':
      return 'unknown_urn';
    case 'version-gated':
      return 'version_gate';
    default:
      return 'poison';
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
    ctx.logger.error({ ...ids, ...thrownFields(error) }, 'could not leave the delivery unsettled cleanly');
  }
}
