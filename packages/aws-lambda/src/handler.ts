import { ConfigurationError, type App } from '@babelqueue/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { resolveHandlerOptions, type ResolvedHandlerOptions, type SqsHandlerOptions } from './options.js';
import { queueOfArn } from './record.js';
import { RecordDelivery, type RecordContext, type RecordSettler } from './record-delivery.js';

/**
 * A Lambda function handler for an SQS event source mapping with
 * `ReportBatchItemFailures` on: it resolves with the records to retry.
 */
export type SqsLambdaHandler = (event: SQSEvent, context?: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<SQSBatchResponse>;

/** What the handler uses of an App (any App of `createApp`, whatever its catalog). */
export type ProcessingApp = Pick<App, 'process' | 'transport'>;

/**
 * The Lambda handler of an App on an SQS event source mapping. Each record
 * runs through the App exactly as the SQS binding's worker runs a received
 * message (`app.process`): version gate on `bq-schema-version`, decode
 * (poison?), attempts from `ApproximateReceiveCount`, the handler by URN,
 * the settlement policy. A record is reported in `batchItemFailures` unless
 * it was handled, dropped or written to its DLQ (`<queue>-dlq`), so Lambda
 * deletes exactly those.
 *
 * - A standard queue's records run `concurrency` at a time.
 * - A FIFO batch (`.fifo`) runs in order and stops at the first failure: that
 *   record and every one after it are reported, so a group's order holds.
 * - Each handler's timeout is the function's remaining time less
 *   `timeoutMarginMs` (or the App's `handlerTimeoutMs`, if lower); a timed-out
 *   handler is failed (retry path). A record that would start with no time
 *   left is not begun and is reported.
 *
 * The App's transport must be an `SqsTransport` (`@babelqueue/sqs`): the DLQ
 * write and the retry release go through it.
 *
 * @example
 * ```ts
 * const app = createApp({ transport: new SqsTransport(), deadLetter: true });
 * app.handle('urn:babel:orders:created', async (data) => { ... });
 * export const handler = sqsHandler(app);
 * ```
 */
export function sqsHandler(app: ProcessingApp, options: SqsHandlerOptions = {}): SqsLambdaHandler {
  const settler = sqsTransportOf(app);
  const settings = resolveHandlerOptions(options);
  return async (event, context) => {
    const records = Array.isArray(event?.Records) ? event.Records : [];
    const recordContext: RecordContext = {
      settler,
      logger: settings.logger,
      releaseRetries: settings.releaseRetries,
      receivedAt: Date.now(),
    };
    const timeLeft = handlerTime(context, settings);
    // A record that throws here (a bug) is reported, never the whole batch failed.
    const run = (record: SQSRecord) => handleRecord(app, recordContext, record, timeLeft, settings).catch((error: unknown) => {
      settings.logger.error({ messageId: record.messageId, error: error instanceof Error ? error.message : String(error) }, 'unexpected error; record reported as failed');
      return false;
    });
    const ok = records.some((r) => queueOfArn(r.eventSourceARN)?.endsWith('.fifo') === true)
      ? await inOrder(records, run, recordContext)
      : await concurrently(records, run, settings.concurrency);
    return { batchItemFailures: records.filter((_, i) => !ok[i]).map((r) => ({ itemIdentifier: r.messageId })) };
  };
}

/** The App's transport, checked to be the SQS binding (the one that can write its DLQ records and release). */
function sqsTransportOf(app: ProcessingApp): RecordSettler {
  const transport = app?.transport as Partial<RecordSettler & { rules: { name: string } }> | undefined;
  if (typeof app?.process !== 'function' || transport === undefined) {
    throw new ConfigurationError('sqsHandler needs an App from createApp() of @babelqueue/core');
  }
  if (transport.rules?.name !== 'sqs' || typeof transport.writeDeadLetter !== 'function' || typeof transport.changeVisibility !== 'function') {
    throw new ConfigurationError(`sqsHandler needs an App on an SqsTransport (@babelqueue/sqs), got the ${String(transport.rules?.name)} binding`);
  }
  return transport as RecordSettler;
}

/** The time a handler starting now may take, or undefined without a Lambda context. */
function handlerTime(context: Pick<Context, 'getRemainingTimeInMillis'> | undefined, settings: ResolvedHandlerOptions): () => number | undefined {
  if (typeof context?.getRemainingTimeInMillis !== 'function') return () => undefined;
  return () => {
    const left = context.getRemainingTimeInMillis() - settings.timeoutMarginMs;
    return Number.isFinite(left) ? left : undefined;
  };
}

/** One record through the App; true when Lambda may delete it. */
async function handleRecord(
  app: ProcessingApp,
  context: RecordContext,
  record: SQSRecord,
  timeLeft: () => number | undefined,
  settings: ResolvedHandlerOptions,
): Promise<boolean> {
  const queue = queueOfArn(record.eventSourceARN);
  if (queue === undefined) {
    settings.logger.error({ messageId: record.messageId, eventSourceARN: record.eventSourceARN }, 'record without an SQS queue ARN; reported as failed');
    return false;
  }
  const left = timeLeft();
  if (left !== undefined && left <= 0) {
    settings.logger.warn({ queue, messageId: record.messageId, timeoutMarginMs: settings.timeoutMarginMs }, "not begun: the function's time is running out; reported as failed");
    await giveBack(context, record, queue);
    return false;
  }
  const delivery = new RecordDelivery(context, record, queue);
  await app.process(delivery, left === undefined ? {} : { handlerTimeoutMs: left });
  return delivery.succeeded;
}

/** FIFO: one after the other; after the first failure the rest are reported without being begun, so no group runs ahead of a failed message. */
async function inOrder(records: readonly SQSRecord[], run: (record: SQSRecord) => Promise<boolean>, context: RecordContext): Promise<boolean[]> {
  const ok: boolean[] = records.map(() => false);
  for (let i = 0; i < records.length; i++) {
    ok[i] = await run(records[i]!);
    if (ok[i]) continue;
    const rest = records.slice(i + 1);
    if (rest.length > 0) {
      context.logger.info({ queue: queueOfArn(records[i]!.eventSourceARN), failed: records[i]!.messageId, notBegun: rest.length },
        'FIFO batch stops at the first failure: the records after it are reported as failed without being begun');
      for (const record of rest) {
        const queue = queueOfArn(record.eventSourceARN);
        if (queue !== undefined) await giveBack(context, record, queue);
      }
    }
    break;
  }
  return ok;
}

/** A standard queue: up to `concurrency` records at once. */
async function concurrently(records: readonly SQSRecord[], run: (record: SQSRecord) => Promise<boolean>, concurrency: number): Promise<boolean[]> {
  const ok: boolean[] = records.map(() => false);
  let next = 0;
  const lane = async () => {
    while (next < records.length) {
      const i = next++;
      ok[i] = await run(records[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, records.length) }, lane));
  return ok;
}

/** A record reported without being begun is made visible again at once (with `releaseRetries`); a failure leaves it to its visibility timeout. */
async function giveBack(context: RecordContext, record: SQSRecord, queue: string): Promise<void> {
  if (!context.releaseRetries) return;
  try {
    await new RecordDelivery(context, record, queue).release(0);
  } catch (error) {
    context.logger.warn({ queue, messageId: record.messageId, error: error instanceof Error ? error.message : String(error) },
      'could not release a record that was not begun; it reappears when its visibility timeout lapses');
  }
}
