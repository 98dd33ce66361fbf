import type { HeaderValue, ScannedRecord } from '@babelqueue/core';
import type { Channel, ChannelModel, GetMessage } from 'amqplib';

/** Where a scan starts, how far it may read, and what stops it early. */
export interface ScanWindow {
  readonly offset: number;
  /** The most messages one scan holds (`scanWindow`). */
  readonly window: number;
  readonly signal: AbortSignal | undefined;
}

/**
 * Reads the ready messages of `queue` from `offset` on without consuming
 * them. AMQP 0-9-1 has no peek, so the scan opens a channel of its own and
 * takes messages one by one with `basic.get` (no ack), yielding those at or
 * past `offset`; when the iteration ends (or after `window` messages) the
 * channel is closed and RabbitMQ puts every held message back in its place.
 * An absent queue reads as empty.
 */
export async function* scanQueue(model: ChannelModel, queue: string, { offset, window, signal }: ScanWindow): AsyncGenerator<ScannedRecord> {
  const channel = await model.createChannel();
  channel.on('error', () => undefined);
  try {
    for (let index = 0; index < window; index++) {
      if (signal?.aborted) return;
      let message: GetMessage | false;
      try {
        message = await channel.get(queue, { noAck: false });
      } catch (error) {
        if ((error as { code?: number }).code === 404) return;
        throw error;
      }
      if (message === false) return;
      if (index >= offset) yield { body: message.content, headers: nativeMetadata(message), index };
    }
  } finally {
    // Closing the channel releases every message it holds, in place.
    await channel.close().catch(() => undefined);
  }
}

/** Up to `max` bodies from the head of `queue`, taken with basic.get (no ack) on `channel`: put back when it closes. */
export async function browseQueue(channel: Channel, queue: string, max: number): Promise<Buffer[]> {
  const bodies: Buffer[] = [];
  while (bodies.length < max) {
    const message: GetMessage | false = await channel.get(queue, { noAck: false });
    if (message === false) break;
    bodies.push(message.content);
  }
  return bodies;
}

/** The AMQP headers table and the set basic properties (`amqp.message_id`, …) as plain values. */
function nativeMetadata(message: GetMessage): Record<string, HeaderValue> {
  const out: Record<string, HeaderValue> = {};
  const { headers, ...properties } = message.properties as unknown as { headers?: Record<string, unknown> } & Record<string, unknown>;
  for (const [name, value] of Object.entries(properties)) {
    if (value !== undefined && value !== null) out[`amqp.${snake(name)}`] = plain(value);
  }
  for (const [name, value] of Object.entries(headers ?? {})) out[name] = plain(value);
  return out;
}

function plain(value: unknown): HeaderValue {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'bigint') return value.toString();
  return JSON.stringify(value) ?? String(value);
}

function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
