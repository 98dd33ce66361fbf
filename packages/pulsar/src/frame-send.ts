import type { Socket } from 'node:net';
import type WebSocket from 'ws';

/** The TCP (or TLS) socket under each WebSocket, from its upgrade response. */
const sockets = new WeakMap<WebSocket, Socket>();
/** Sockets corked until the current turn of the event loop ends. */
const corked = new WeakSet<Socket>();

/** Remembers the socket under `ws` (call before it opens: the upgrade comes first). */
export function trackSocket(ws: WebSocket): void {
  ws.once('upgrade', (response) => sockets.set(ws, response.socket));
}

/**
 * Sends a text frame on `ws`. The frames one socket sends in a turn of the
 * event loop (a permit and an ack per message, a window of publishes) leave
 * in one write: ws writes every frame by itself, and a system call per frame
 * was a third of a consumer's CPU. The socket stays corked until setImmediate,
 * after the I/O callbacks of this turn.
 */
export function sendFrame(ws: WebSocket, text: string, callback?: (error?: Error) => void): void {
  const socket = sockets.get(ws);
  if (socket !== undefined && !corked.has(socket)) {
    corked.add(socket);
    socket.cork();
    setImmediate(() => {
      corked.delete(socket);
      socket.uncork();
    });
  }
  ws.send(text, callback);
}
