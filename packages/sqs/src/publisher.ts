import { randomUUID } from 'node:crypto';
import { SendMessageBatchCommand, SendMessageCommand, type SendMessageBatchRequestEntry, type SQSClient } from '@aws-sdk/client-sqs';
import { ConfigurationError, decodeUtf8Strict } from '@babelqueue/core';
import { messageBytes, type Attributes } from './projection.js';
import { isQueueMissing } from './aws-errors.js';
import { BatchEntryError, DelayNotSupportedError, InvalidBodyError, MessageTooLargeError } from './errors.js';
import { BATCH_BYTES, BATCH_ENTRIES, GatheredSends, type Prepared } from './gathered-sends.js';
import { MAX_DELAY_SECONDS, type ResolvedOptions } from './options.js';
import type { QueueDirectory, QueueInfo } from './queues.js';

/** One message on its way to an SQS queue. */
export interface Outgoing {
  /** Sent exactly as given (it must be valid UTF-8: SQS carries text). */
  readonly body: Buffer;
  readonly attributes: Attributes;
  /** FIFO `MessageGroupId`; default the `messageGroupId` option, else the queue name. */
  readonly groupId?: string;
  /** FIFO `MessageDeduplicationId` unless the queue deduplicates by content; default a fresh UUID (never deduplicated). */
  readonly deduplicationId?: string;
  /** `DelaySeconds` = ceil(delayMs / 1000); standard queues only, up to 900 s. */
  readonly delayMs?: number;
}

/** The outcome of one message of {@link Sender.sendMany}, in the order given. */
export type SendOutcome = { readonly ok: true } | { readonly ok: false; readonly error: Error };

/** Batch calls of one `sendMany` in flight at once. */
const BATCH_WINDOW = 8;

/**
 * Sends messages to SQS: every check SQS would fail on (text, delay, size) is
 * made first, so a refusal names the reason and nothing is sent; FIFO
 * queues get their group and deduplication ids.
 */
export class Sender {
  private readonly gathered = new GatheredSends({
    one: (info, prepared) => this.sendOne(info, prepared),
    batch: async (info, prepared) => (await this.sendBatch(info, prepared.map((p, index) => ({ index, entry: { Id: String(index), ...p.fields } })))).map(([, outcome]) => outcome),
  });

  constructor(
    private readonly client: SQSClient,
    private readonly queues: QueueDirectory,
    private readonly options: ResolvedOptions,
  ) {}

  /**
   * Sends one message; resolves once SQS has it. Sends to one standard queue
   * made together go out in `SendMessageBatch` calls ({@link GatheredSends}).
   */
  async send(queue: string, outgoing: Outgoing): Promise<void> {
    const info = await this.queues.get(queue);
    const prepared = this.entry(info, outgoing);
    await (info.fifo ? this.sendOne(info, prepared) : this.gathered.send(info, prepared));
  }

  /** Sends what waits to be gathered now (before a close destroys the client). */
  flush(): void {
    this.gathered.flush();
  }

  private async sendOne(info: QueueInfo, { fields }: Prepared): Promise<void> {
    try {
      await this.client.send(new SendMessageCommand({ QueueUrl: info.url, ...fields }));
    } catch (error) {
      if (isQueueMissing(error)) this.queues.forget(info.name);
      throw error;
    }
  }

  /**
   * Sends messages to one queue with `SendMessageBatch` (10 per call, 1 MiB
   * per call; calls in parallel, one after the other on a FIFO queue). Never rejects for one message: each gets its outcome, in order;
   * a message refused before sending, or named in the call's `Failed` list, or
   * in a call that failed as a whole, is `ok: false` with the reason.
   */
  async sendMany(queue: string, outgoing: readonly Outgoing[]): Promise<SendOutcome[]> {
    const outcomes: SendOutcome[] = new Array(outgoing.length);
    let info: QueueInfo;
    try {
      info = await this.queues.get(queue);
    } catch (error) {
      return outgoing.map(() => ({ ok: false as const, error: asError(error) }));
    }
    const batches: { index: number; entry: SendMessageBatchRequestEntry }[][] = [];
    let current: { index: number; entry: SendMessageBatchRequestEntry }[] = [];
    let bytes = 0;
    outgoing.forEach((message, index) => {
      let entry: SendMessageBatchRequestEntry;
      let size: number;
      try {
        const prepared = this.entry(info, message);
        entry = { Id: String(index), ...prepared.fields };
        size = prepared.bytes;
      } catch (error) {
        outcomes[index] = { ok: false, error: asError(error) };
        return;
      }
      if (current.length === BATCH_ENTRIES || (current.length > 0 && bytes + size > BATCH_BYTES)) {
        batches.push(current);
        current = [];
        bytes = 0;
      }
      current.push({ index, entry });
      bytes += size;
    });
    if (current.length > 0) batches.push(current);

    let next = 0;
    // A FIFO queue keeps the order SQS received the calls in: one call at a time there.
    const window = info.fifo ? 1 : BATCH_WINDOW;
    await Promise.all(Array.from({ length: Math.min(window, batches.length) }, async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        for (const [index, outcome] of await this.sendBatch(info, batch)) outcomes[index] = outcome;
      }
    }));
    return outcomes;
  }

  private async sendBatch(info: QueueInfo, batch: { index: number; entry: SendMessageBatchRequestEntry }[]): Promise<[number, SendOutcome][]> {
    try {
      const { Successful = [], Failed = [] } = await this.client.send(new SendMessageBatchCommand({
        QueueUrl: info.url,
        Entries: batch.map((b) => b.entry),
      }));
      const ok = new Set(Successful.map((s) => s.Id));
      const failed = new Map(Failed.map((f) => [f.Id, f]));
      return batch.map(({ index, entry }): [number, SendOutcome] => {
        if (ok.has(entry.Id)) return [index, { ok: true }];
        const f = failed.get(entry.Id);
        return [index, {
          ok: false,
          error: f === undefined
            ? new BatchEntryError('NoAnswer', 'SQS named this entry neither successful nor failed', false)
            : new BatchEntryError(f.Code ?? 'Failed', f.Message ?? 'the entry failed', f.SenderFault === true),
        }];
      });
    } catch (error) {
      if (isQueueMissing(error)) this.queues.forget(info.name);
      return batch.map(({ index }) => [index, { ok: false, error: asError(error) }]);
    }
  }

  /** The SendMessage fields of one message and its size, or a clear error for what SQS would refuse. */
  private entry(info: QueueInfo, outgoing: Outgoing): Prepared {
    const body = sqsText(outgoing.body);
    const attributes = outgoing.attributes;
    const bytes = messageBytes(outgoing.body.length, attributes);
    if (bytes > info.maxMessageBytes) throw new MessageTooLargeError(info.name, bytes, info.maxMessageBytes);
    const delaySeconds = this.delaySeconds(info, outgoing.delayMs ?? 0);
    const fields = {
      MessageBody: body,
      ...(Object.keys(attributes).length > 0 ? { MessageAttributes: attributes } : {}),
      ...(delaySeconds > 0 ? { DelaySeconds: delaySeconds } : {}),
      ...(info.fifo
        ? {
            MessageGroupId: outgoing.groupId ?? this.options.messageGroupId ?? info.name,
            ...(info.contentBasedDeduplication ? {} : { MessageDeduplicationId: outgoing.deduplicationId ?? randomUUID() }),
          }
        : {}),
    };
    return { fields, bytes };
  }

  private delaySeconds(info: QueueInfo, delayMs: number): number {
    if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) {
      throw new ConfigurationError(`delayMs must be a non-negative number, got ${String(delayMs)}`);
    }
    if (delayMs === 0) return 0;
    if (info.fifo) {
      throw new DelayNotSupportedError(`SQS FIFO queue "${info.name}" takes no per-message delay (delayMs=${delayMs}); set DelaySeconds on the queue instead; nothing was sent`);
    }
    const seconds = Math.ceil(delayMs / 1000);
    if (seconds > MAX_DELAY_SECONDS) {
      throw new DelayNotSupportedError(`SQS delays a message at most ${MAX_DELAY_SECONDS} s; delayMs=${delayMs} is ${seconds} s; nothing was sent`);
    }
    return seconds;
  }
}

/**
 * A character SQS does not carry: a control character other than tab, LF and
 * CR, or U+FFFE / U+FFFF (SQS takes #x9, #xA, #xD, #x20–#xD7FF, #xE000–#xFFFD
 * and #x10000–#x10FFFF; valid UTF-8 decodes to no lone surrogate).
 */
// eslint-disable-next-line no-control-regex -- the control characters are what it looks for
const REFUSED = /[\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/;

/**
 * The body as the text SQS carries, refused (never rewritten) when it is
 * empty, not valid UTF-8, or holds a character SQS rejects ({@link REFUSED}).
 * One scan of the decoded text (compiled to a tight loop by the regular
 * expression engine); only a refused body is walked byte by byte, to name the
 * offending character and its offset.
 */
export function sqsText(body: Buffer): string {
  if (body.length === 0) throw new InvalidBodyError('the body is empty; SQS carries no empty message; nothing was sent');
  const text = decodeUtf8Strict(body);
  if (text === null) throw new InvalidBodyError('the body is not valid UTF-8; SQS carries text, and replacing bytes would corrupt it; nothing was sent');
  if (REFUSED.test(text)) throw refusal(body);
  return text;
}

/** The error naming the first character of `body` SQS refuses (there is one). */
function refusal(body: Buffer): InvalidBodyError {
  for (let i = 0; i < body.length; i++) {
    const byte = body[i]!;
    const control = byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d;
    const nonCharacter = byte === 0xef && body[i + 1] === 0xbf && (body[i + 2] === 0xbe || body[i + 2] === 0xbf);
    if (control || nonCharacter) {
      const code = control ? byte : 0xfffe + (body[i + 2]! - 0xbe);
      return new InvalidBodyError(`the body holds U+${code.toString(16).toUpperCase().padStart(4, '0')} at byte ${i}, which SQS does not carry; nothing was sent`);
    }
  }
  return new InvalidBodyError('the body holds a character SQS does not carry; nothing was sent');
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
