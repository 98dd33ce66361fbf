import { Socket } from 'node:net';

/**
 * Counts the writes the sockets `counted` picks hand to the operating system
 * (one per `_write` or `_writev`) until `stop()`: a socket a test holds, or
 * every socket to a port for a client whose socket it cannot reach.
 */
export function countSystemWrites(counted: (socket: Socket) => boolean): { readonly count: number; stop(): void } {
  const proto = Socket.prototype as unknown as Record<'_write' | '_writev', (this: Socket, ...args: unknown[]) => unknown>;
  const originals = { _write: proto._write, _writev: proto._writev };
  const counter = {
    count: 0,
    stop() {
      Object.assign(proto, originals);
    },
  };
  for (const name of ['_write', '_writev'] as const) {
    const original = originals[name];
    proto[name] = function (this: Socket, ...args: unknown[]) {
      if (counted(this)) counter.count += 1;
      return original.apply(this, args);
    };
  }
  return counter;
}
