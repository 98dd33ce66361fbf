import type { Socket } from 'node:net';
import type WebSocket from 'ws';
import { coalesceWrites } from '@babelqueue/core/binding';

/** The TCP (or TLS) socket under each WebSocket, from its upgrade response. */
const sockets = new WeakMap<WebSocket, Socket>();

/** Remembers the socket under `ws` (call before it opens: the upgrade comes first). */
export function trackSocket(ws: WebSocket): void {
  ws.once('upgrade', (response) => sockets.set(ws, response.socket));
}

/**
 * Sends a text frame on `ws`; the frames one socket sends after the first in
 * one run of callbacks (a permit beside an ack, a window of publishes) leave
 * in one write ({@link coalesceWrites}: ws writes every frame by itself).
 */
export function sendFrame(ws: WebSocket, text: string, callback?: (error?: Error) => void): void {
  const socket = sockets.get(ws);
  if (socket !== undefined) coalesceWrites(socket);
  ws.send(text, callback);
}
