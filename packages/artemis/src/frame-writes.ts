import type { Connection } from 'rhea';
import { writeInOnePass, type Corkable } from '@babelqueue/core/binding';

/** What this module reads of rhea's (untyped) connection internals. */
interface RheaConnection {
  socket?: Corkable;
  _process(): void;
}

/**
 * Makes `connection` hand the frames of one output pass to its socket in one
 * write.
 *
 * rhea (3.0.5) gathers the work of a tick (the transfers of every send, the
 * dispositions and credit of every settlement) and writes it in one pass, but
 * it writes each frame to the socket by itself: a publisher with a window of
 * sends in flight made a system call per message. Corking the socket for the
 * pass ({@link writeInOnePass}) sends its frames together when the pass ends.
 */
export function writeFramesTogether(connection: Connection): void {
  const target = connection as unknown as RheaConnection;
  const pass = target._process.bind(connection);
  target._process = () => writeInOnePass(target.socket, pass);
}
