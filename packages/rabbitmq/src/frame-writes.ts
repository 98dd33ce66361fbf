import type { ChannelModel } from 'amqplib';
import { writeInOnePass, type Corkable } from '@babelqueue/core/binding';

/** What this module reads of amqplib's (untyped) connection internals. */
interface AmqplibConnection {
  stream?: Corkable;
  muxer?: { _readIncoming?: () => void };
}

/**
 * Makes `model`'s connection hand the frames of one muxer pass to its socket
 * in one write.
 *
 * amqplib (2.3) queues each channel's frames and a muxer writes what is queued
 * on the next turn of the event loop, in one pass, but each frame by itself: a
 * `basic.get` poller wrote its ack and its next get in two system calls, a
 * publisher one per message of its window. Corking the socket for the pass
 * ({@link writeInOnePass}) sends them together when the pass ends. Another
 * amqplib without that muxer is left as it is (its frames go one by one).
 */
export function writeFramesTogether(model: ChannelModel): void {
  const connection = (model as unknown as { connection?: AmqplibConnection }).connection;
  const muxer = connection?.muxer;
  const readIncoming = muxer?._readIncoming;
  if (connection === undefined || muxer === undefined || typeof readIncoming !== 'function') return;
  const pass = readIncoming.bind(muxer);
  muxer._readIncoming = () => writeInOnePass(connection.stream, pass);
}
