import { Socket } from 'node:net';

/** Counts the writes `socket` hands to the operating system (one per `_write` or `_writev`). */
export function countSystemWrites(socket: Socket): { readonly count: number } {
  const counter = { count: 0 };
  const target = socket as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
  for (const name of ['_write', '_writev'] as const) {
    const original = target[name].bind(socket);
    target[name] = (...args: unknown[]) => {
      counter.count += 1;
      return original(...args);
    };
  }
  return counter;
}

/**
 * Counts the writes every socket to `port` hands to the operating system
 * while it runs (for a client whose socket a test cannot reach); `stop()`
 * ends the count.
 */
export function countSystemWritesTo(port: number): { readonly count: number; stop(): void } {
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
      if (this.remotePort === port) counter.count += 1;
      return original.apply(this, args);
    };
  }
  return counter;
}
