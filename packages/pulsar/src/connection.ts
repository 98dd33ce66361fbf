import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import WebSocket from 'ws';
import { BROKER, BrokerUnavailableError, PulsarRefusedError } from './errors.js';
import { trackSocket } from './frame-send.js';
import type { ResolvedOptions } from './options.js';

/** An HTTP answer of the web service. */
export interface HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** How often an idle WebSocket is pinged; a ping without a pong by the next tick ends it (half-open connection). */
const HEARTBEAT_MS = 30_000;

/**
 * The binding's way to the broker's web service: WebSockets for producing and
 * consuming, plain HTTP(S) for the admin API. Every request carries the token
 * as `Authorization: Bearer`, and TLS options apply to both.
 */
export class PulsarConnection {
  constructor(private readonly options: ResolvedOptions) {}

  /** `Authorization` for the current token (a token function is asked every time). */
  async authHeaders(): Promise<Record<string, string>> {
    if (this.options.token === undefined) return {};
    return { Authorization: `Bearer ${await this.token()}` };
  }

  /** The current token (a token function is asked every time); only called when one is configured. */
  async token(): Promise<string> {
    const source = this.options.token;
    const token = typeof source === 'function' ? await source() : source;
    if (typeof token !== 'string' || token.trim() === '') {
      throw new PulsarRefusedError(401, 'the token function returned no token');
    }
    return token;
  }

  /** The `ws(s)://` URL of a WebSocket API path such as `/ws/v2/producer/persistent/public/default/orders`. */
  socketUrl(path: string, query: Readonly<Record<string, string>> = {}): string {
    const url = new URL(this.options.webServiceUrl.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
    return url.href;
  }

  /**
   * The web service answered the last socket opened or request sent (false
   * once one could not reach it, until one does): the transport's `connected`.
   */
  reachable = false;

  /**
   * Opens a WebSocket of the WebSocket API. Resolves once it is open; rejects
   * with a {@link PulsarRefusedError} naming the HTTP status when the upgrade
   * is refused, or a {@link BrokerUnavailableError} when the web service cannot
   * be reached. The socket is pinged while it lives.
   */
  async openSocket(path: string, query: Readonly<Record<string, string>> = {}): Promise<WebSocket> {
    const headers = await this.authHeaders();
    const url = this.socketUrl(path, query);
    return new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(url, {
        headers,
        handshakeTimeout: 30_000,
        perMessageDeflate: false,
        ...(this.options.tls ?? {}),
      });
      trackSocket(ws);
      const fail = (error: Error) => {
        ws.removeAllListeners('open');
        ws.on('error', () => undefined);
        ws.terminate();
        reject(error);
      };
      ws.once('open', () => {
        this.reachable = true;
        ws.removeListener('error', onError);
        ws.on('error', () => undefined);
        heartbeat(ws);
        resolve(ws);
      });
      const onError = (error: Error) => fail(this.unreachable(`Pulsar at ${this.options.webServiceUrl.origin} is unavailable: ${error.message}`, { cause: error }));
      ws.once('error', onError);
      ws.once('unexpected-response', (_request, response: IncomingMessage) => {
        readBody(response).then((body) => {
          fail(new PulsarRefusedError(response.statusCode ?? 0, `Pulsar refused ${path} (HTTP ${response.statusCode}): ${reasonOf(body)}`));
        }, (error: Error) => fail(new BrokerUnavailableError(BROKER, error.message, { cause: error })));
      });
    });
  }

  /** One admin API request (`path` from `/admin/v2/…`); resolves with any status, rejects only when the service cannot be reached. */
  async request(method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<HttpResponse> {
    const url = new URL(this.options.webServiceUrl.href);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
    const headers: Record<string, string> = {
      ...(await this.authHeaders()),
      Accept: 'application/json',
      ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) } : {}),
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<HttpResponse>((resolve, reject) => {
      const req = send(url, { method, headers, timeout: timeoutMs, ...(url.protocol === 'https:' ? this.options.tls ?? {} : {}) }, (res) => {
        this.reachable = true;
        readBody(res).then((data) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data }), reject);
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', (error) => reject(this.unreachable(`Pulsar at ${this.options.webServiceUrl.origin} is unavailable: ${error.message}`, { cause: error })));
      req.end(payload);
    });
  }

  /** The error of a web service that could not be reached; marks the connection unreachable. */
  private unreachable(message: string, options: { cause: Error }): BrokerUnavailableError {
    this.reachable = false;
    return new BrokerUnavailableError(BROKER, message, options);
  }
}

/**
 * Failures that retrying cannot cure before a first success: refused
 * credentials, and a server certificate that does not verify.
 */
export function isConfigurationFailure(error: unknown): boolean {
  if (error instanceof PulsarRefusedError && (error.status === 401 || error.status === 403)) return true;
  const code = ((error as { cause?: { code?: unknown } } | null)?.cause?.code ?? (error as { code?: unknown } | null)?.code);
  return typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/.test(code);
}

/** The reason text of an error answer: Pulsar's JSON `reason`, a Jetty error page's title, or the text itself (short). */
export function reasonOf(body: Buffer): string {
  const text = body.toString('utf8').trim();
  try {
    const parsed = JSON.parse(text) as { reason?: unknown };
    if (typeof parsed.reason === 'string') return parsed.reason;
  } catch {
    // not JSON
  }
  const title = /<title>([\s\S]*?)<\/title>/i.exec(text)?.[1];
  return (title ?? text).replace(/\s+/g, ' ').slice(0, 300) || 'no reason given';
}

function readBody(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** Pings the socket; one that has not answered the previous ping by the next tick is ended (its 'close' follows). */
function heartbeat(ws: WebSocket): void {
  let answered = true;
  ws.on('pong', () => {
    answered = true;
  });
  const timer = setInterval(() => {
    if (!answered) {
      ws.terminate();
      return;
    }
    answered = false;
    try {
      ws.ping();
    } catch {
      // closing already: its 'close' clears the timer
    }
  }, HEARTBEAT_MS);
  timer.unref();
  ws.once('close', () => clearInterval(timer));
}
