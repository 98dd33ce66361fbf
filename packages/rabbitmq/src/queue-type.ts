import { CountedReadError } from '@babelqueue/core';
import type { ChannelModel } from 'amqplib';

/** What {@link queueType} found: `absent`, a type RabbitMQ named (`classic`, `quorum`, `stream`), or `unknown`. */
export type QueueType = 'absent' | 'unknown' | (string & {});

/** Redeclares echoing one more argument per round; a queue has far fewer optional arguments than this. */
const MAX_ROUNDS = 16;

/**
 * The type of an existing queue, over AMQP 0-9-1 alone (no management API):
 * AMQP has no query for it, but RabbitMQ compares a redeclaration with the
 * queue's own arguments and names the first that differs. So the queue is
 * declared again, each time on a fresh channel (a refusal closes it), with
 * `x-queue-type: classic`: accepted → classic (a redeclaration with equal
 * arguments changes nothing); refused on `x-queue-type` → the type RabbitMQ
 * names; refused on another argument (a TTL, a length limit) → that
 * argument's current value is echoed and the queue declared again. An absent
 * queue (passive check first) is never created; `unknown` when the answers
 * cannot be read (a value of a type that cannot be echoed).
 */
export async function queueType(model: ChannelModel, queue: string): Promise<QueueType> {
  const echoed: Record<string, unknown> = { 'x-queue-type': 'classic' };
  let durable = true;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const channel = await model.createChannel();
    channel.on('error', () => undefined);
    try {
      if (round === 0) await channel.checkQueue(queue);
      await channel.assertQueue(queue, { durable, exclusive: false, autoDelete: false, arguments: echoed });
      return 'classic';
    } catch (error) {
      const code = (error as { code?: number }).code;
      if (code === 404) return 'absent';
      if (code !== 406) throw error;
      const why = (error as Error).message;
      const type = /inequivalent arg 'x-queue-type' .*current is '([a-z]+)'/.exec(why);
      if (type) return type[1] as string;
      if (/inequivalent arg 'durable'/.test(why)) {
        durable = !durable;
        continue;
      }
      const arg = /inequivalent arg '([^']+)' .*current is the value '([^']*)' of type '([a-z]+)'/.exec(why);
      const value = arg ? echo(arg[2] as string, arg[3] as string) : undefined;
      if (arg === null || value === undefined) return 'unknown';
      echoed[arg[1] as string] = value;
    } finally {
      await channel.close().catch(() => undefined);
    }
  }
  return 'unknown';
}

/**
 * The optional arguments of an existing queue of `type` (`x-delivery-limit`,
 * `x-message-ttl`, …), read as {@link queueType} reads the type: the queue is
 * declared again with the arguments known so far, each refusal names one
 * that differs and its value, until a declaration is accepted (it then
 * changes nothing). Undefined when a value cannot be echoed.
 */
export async function queueArguments(model: ChannelModel, queue: string, type: string): Promise<Record<string, unknown> | undefined> {
  const echoed: Record<string, unknown> = { 'x-queue-type': type };
  let durable = true;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const channel = await model.createChannel();
    channel.on('error', () => undefined);
    try {
      await channel.assertQueue(queue, { durable, exclusive: false, autoDelete: false, arguments: echoed });
      return echoed;
    } catch (error) {
      if ((error as { code?: number }).code !== 406) throw error;
      const why = (error as Error).message;
      if (/inequivalent arg 'durable'/.test(why)) {
        durable = !durable;
        continue;
      }
      const arg = /inequivalent arg '([^']+)' .*current is the value '([^']*)' of type '([a-z]+)'/.exec(why);
      const value = arg ? echo(arg[2] as string, arg[3] as string) : undefined;
      if (arg === null || value === undefined) return undefined;
      echoed[arg[1] as string] = value;
    } finally {
      await channel.close().catch(() => undefined);
    }
  }
  return undefined;
}

/** The value to send back for one RabbitMQ reports (integers and strings; anything else cannot be echoed). */
function echo(text: string, type: string): number | string | undefined {
  if (['byte', 'short', 'signedint', 'long', 'unsignedbyte', 'unsignedshort', 'unsignedint'].includes(type) && /^-?\d+$/.test(text)) return Number(text);
  if (type === 'longstr') return text;
  return undefined;
}

/**
 * Refuses a read of `queue` that would count a delivery of every message it
 * reads: any queue but a classic one (a quorum queue counts each take-and-put-back
 * in `x-delivery-count`, and at its delivery limit — `x-delivery-limit`, a
 * policy, or RabbitMQ 4's default of 20 — drops or dead-letters the message).
 * A queue whose type cannot be told is refused too: the read is free only
 * where that is known.
 */
export async function refuseCountedRead(model: ChannelModel, queue: string, what: 'scan' | 'browse'): Promise<void> {
  const type = await queueType(model, queue);
  if (type === 'classic' || type === 'absent') return;
  const kind = type === 'unknown' ? 'a queue whose type could not be told (so possibly a quorum queue)' : `a ${type} queue`;
  throw new CountedReadError(
    queue,
    `refused to ${what} "${queue}": it is ${kind}. AMQP 0-9-1 has no peek, so a read takes every message and puts it back, and a quorum queue counts each ` +
      'such return in x-delivery-count; at the queue\'s delivery limit (x-delivery-limit, a policy, or RabbitMQ 4\'s default of 20) RabbitMQ drops or ' +
      'dead-letters the message. Every page, search or chart would cost each record read one delivery. Read anyway only if that is acceptable: ' +
      'allowCountedReads (babelqueue console / dlq: --allow-counted-reads)',
  );
}
