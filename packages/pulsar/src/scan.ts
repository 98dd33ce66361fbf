import type { ScannedRecord, ScanOptions } from '@babelqueue/core';
import type { PulsarAdmin } from './admin.js';
import { splitBatch } from './batch.js';
import type { HttpResponse } from './connection.js';
import type { Topic } from './topics.js';

/** Backlog positions one round of a scan peeks at once. */
export const PEEK_WINDOW = 16;

/**
 * The backlog of `subscription` on `topic` from its head, oldest first, read
 * with the admin API's peek (`…/subscription/<name>/position/<n>`), which
 * never acknowledges and never moves the cursor, so it changes nothing a
 * consumer sees. Entries are peeked {@link PEEK_WINDOW} positions at a time;
 * a batch entry (a batching producer's) is split into its messages. A
 * position addresses an entry, not a message, so `offset` is reached by
 * peeking past the first entries. A topic or subscription that does not exist
 * reads as empty.
 */
export async function* peekSubscription(admin: PulsarAdmin, topic: Topic, subscription: string, options: ScanOptions = {}): AsyncGenerator<ScannedRecord> {
  const offset = options.offset ?? 0;
  let index = 0;
  for (let first = 1; ; first += PEEK_WINDOW) {
    if (options.signal?.aborted) return;
    const positions = Array.from({ length: PEEK_WINDOW }, (_, i) => first + i);
    const entries = await Promise.all(positions.map((position) => admin.peekEntry(topic, subscription, position)));
    for (const entry of entries) {
      if (entry === undefined) return;
      for (const message of messagesOf(entry)) {
        if (index >= offset) yield { ...message, index };
        index += 1;
        if (options.signal?.aborted) return;
      }
    }
  }
}

/** The messages of one peeked entry: itself, or the messages of its batch. */
function messagesOf(entry: HttpResponse): Omit<ScannedRecord, 'index'>[] {
  const id = header(entry, 'x-pulsar-message-id') ?? '?';
  const count = Number(header(entry, 'x-pulsar-num-batch-message'));
  if (Number.isSafeInteger(count) && count > 0) {
    return splitBatch(entry.body, count).map((message, i) => ({
      body: message.payload,
      headers: message.properties,
      location: `message ${id}, batch index ${i}`,
    }));
  }
  return [{ body: entry.body, headers: propertiesOf(header(entry, 'x-pulsar-property')), location: `message ${id}` }];
}

function header(entry: HttpResponse, name: string): string | undefined {
  const value = entry.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The `X-Pulsar-PROPERTY` header: the message properties as a JSON object of strings. */
function propertiesOf(json: string | undefined): Record<string, string> {
  if (json === undefined) return {};
  const parsed: unknown = JSON.parse(json);
  const out: Record<string, string> = {};
  if (parsed !== null && typeof parsed === 'object') {
    for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) out[key] = String(value);
  }
  return out;
}
