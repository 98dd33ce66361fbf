import type { Server } from 'node:http';
import type { AppHealth } from './health.js';
import type { Logger } from './logger.js';
import { thrownFields } from './thrown.js';

/** A running probe server; `close()` stops it (idempotent). */
export interface HealthServer {
  /** The port it listens on (the one chosen when asked for 0). */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves the Kubernetes probes: `GET /healthz` answers 200 while the worker is
 * live ({@link AppHealth.live}), `GET /readyz` 200 while it is ready
 * ({@link AppHealth.ready}); 503 otherwise. Both bodies are the health as JSON
 * with `status` "ok" or "fail". That the server answers at all shows the event
 * loop is not blocked. Loaded only when a port is asked for.
 */
export async function serveHealth(health: () => Promise<AppHealth>, port: number, host: string, logger: Logger): Promise<HealthServer> {
  const { createServer } = await import('node:http');
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const probe = path === '/healthz' ? 'live' : path === '/readyz' ? 'ready' : undefined;
    const send = (code: number, body: object) => {
      response.writeHead(code, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(request.method === 'HEAD' ? undefined : JSON.stringify(body));
    };
    if (probe === undefined) return send(404, { error: `no such probe ${path}; use /healthz or /readyz` });
    if (request.method !== 'GET' && request.method !== 'HEAD') return send(405, { error: 'use GET' });
    health().then(
      (state) => send(state[probe] ? 200 : 503, { status: state[probe] ? 'ok' : 'fail', ...state }),
      (error: unknown) => {
        logger.warn({ probe: path, ...thrownFields(error) }, 'health probe failed');
        send(503, { status: 'fail', error: 'health check failed' });
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as { port: number }).port;
  let closed: Promise<void> | undefined;
  return {
    port: bound,
    close: () => (closed ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    })),
  };
}
