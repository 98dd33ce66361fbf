import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { isLoopback, type AuthSettings } from './options.js';

/** The session cookie: a random id; the CSRF token is derived from it. */
export const SESSION_COOKIE = 'bq_console_session';
/** The header every API request (but `/api/session`) must carry with the session's CSRF token. */
export const CSRF_HEADER = 'x-bq-csrf';

/** No inline script or style, nothing from elsewhere, no framing. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const MAX_SESSIONS = 1000;

/**
 * Authentication, sessions and CSRF for the console's server:
 * - every response carries the CSP and the usual hardening headers;
 * - on a loopback address the `Host` header must name loopback (DNS rebinding);
 * - `token`: a session cookie set by `/?token=…`, or `Authorization: Bearer`;
 *   `basic`: the browser's basic auth on every request;
 * - every API request (reads too) is refused from another site (`Sec-Fetch-Site`,
 *   `Origin`) and needs the CSRF header matching the session cookie (a Bearer
 *   request carries no ambient credential and needs none); a POST also needs
 *   `Content-Type: application/json`.
 */
export class Guard {
  private readonly secret = randomBytes(32);
  /** Session id → authenticated (token mode); insertion order drops the oldest first. */
  private readonly sessions = new Map<string, boolean>();

  constructor(private readonly auth: AuthSettings, private readonly host: string) {}

  headers(): MiddlewareHandler {
    return async (c, next) => {
      await next();
      c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
      c.header('X-Content-Type-Options', 'nosniff');
      c.header('X-Frame-Options', 'DENY');
      c.header('Referrer-Policy', 'no-referrer');
      c.header('Cross-Origin-Opener-Policy', 'same-origin');
      c.header('Cross-Origin-Resource-Policy', 'same-origin');
      if (c.req.path.startsWith('/api/')) c.header('Cache-Control', 'no-store');
    };
  }

  /** Refuses a request whose Host is not loopback while the server listens on loopback. */
  hostCheck(): MiddlewareHandler {
    return async (c, next) => {
      if (isLoopback(this.host)) {
        const hostname = (c.req.header('host') ?? '').replace(/:\d+$/, '');
        if (!isLoopback(hostname)) return c.text('this console answers only to a loopback host name', 421);
      }
      await next();
    };
  }

  authenticate(): MiddlewareHandler {
    return async (c, next) => {
      const auth = this.auth;
      if (auth.kind === 'basic') {
        if (!this.basicOk(c.req.header('authorization'))) {
          c.header('WWW-Authenticate', 'Basic realm="BabelQueue console", charset="UTF-8"');
          return c.text('authentication required', 401);
        }
      } else if (auth.kind === 'token' && !this.bearer(c) && this.sessions.get(getCookie(c, SESSION_COOKIE) ?? '') !== true) {
        const offered = c.req.query('token');
        if (c.req.method === 'GET' && c.req.path === '/' && offered !== undefined && same(offered, auth.token)) {
          this.newSession(c, true);
          return c.redirect('/', 303);
        }
        return c.req.path.startsWith('/api/')
          ? c.json({ error: 'authentication required: open the console at the address printed when it started (with ?token=…), or send Authorization: Bearer' }, 401)
          : c.text('Authentication required: open the console at the address printed when it started (it ends in ?token=…).', 401);
      }
      await next();
    };
  }

  /**
   * CSRF and same-origin checks on every API request, reads included: on some
   * brokers a read moves messages (RabbitMQ takes and puts back), so no API
   * route may answer a request another site's page makes (an `<img>` tag, a
   * form). Every `/api/*` request is refused when `Sec-Fetch-Site` or `Origin`
   * names another site, and must carry the session's CSRF token (which only
   * the console's own page can read) or a Bearer token; `/api/session`, where
   * the page gets its token, needs only the same-origin checks. A POST also
   * needs a JSON body.
   */
  csrf(): MiddlewareHandler {
    return async (c, next) => {
      const api = c.req.path.startsWith('/api/');
      const write = c.req.method !== 'GET' && c.req.method !== 'HEAD';
      if (api || write) {
        if (write && !(c.req.header('content-type') ?? '').toLowerCase().startsWith('application/json')) {
          return c.json({ error: 'actions take a JSON body (Content-Type: application/json)' }, 415);
        }
        const origin = c.req.header('origin');
        if (origin !== undefined && origin !== `http://${c.req.header('host') ?? ''}` && origin !== `https://${c.req.header('host') ?? ''}`) {
          return c.json({ error: 'cross-origin request refused' }, 403);
        }
        const site = c.req.header('sec-fetch-site');
        if (site !== undefined && site !== 'same-origin' && site !== 'none') return c.json({ error: 'cross-site request refused' }, 403);
        if ((write || c.req.path !== '/api/session') && !this.bearer(c)) {
          const session = getCookie(c, SESSION_COOKIE);
          const token = c.req.header(CSRF_HEADER);
          if (session === undefined || token === undefined || !same(token, this.csrfToken(session))) {
            return c.json({ error: `missing or wrong CSRF token (${CSRF_HEADER}): reload the page; scripts send it from GET /api/session with its cookie, or use a Bearer token` }, 403);
          }
        }
      }
      await next();
    };
  }

  /** The session's CSRF token, starting a session (cookie) when the request has none. */
  sessionToken(c: Context): string {
    const current = getCookie(c, SESSION_COOKIE);
    const id = current !== undefined && (this.auth.kind !== 'token' || this.sessions.has(current)) ? current : this.newSession(c, false);
    return this.csrfToken(id);
  }

  private csrfToken(session: string): string {
    return createHmac('sha256', this.secret).update(session).digest('base64url');
  }

  private newSession(c: Context, authenticated: boolean): string {
    const id = randomBytes(24).toString('base64url');
    this.sessions.set(id, authenticated);
    if (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
    setCookie(c, SESSION_COOKIE, id, { httpOnly: true, sameSite: 'Strict', path: '/' });
    return id;
  }

  private bearer(c: Context): boolean {
    if (this.auth.kind !== 'token') return false;
    const header = c.req.header('authorization') ?? '';
    return header.startsWith('Bearer ') && same(header.slice(7), this.auth.token);
  }

  private basicOk(header: string | undefined): boolean {
    if (this.auth.kind !== 'basic' || header === undefined || !header.startsWith('Basic ')) return false;
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return false;
    // Both compared, always, so the time taken says nothing about which was wrong.
    const user = same(decoded.slice(0, colon), this.auth.username);
    const password = same(decoded.slice(colon + 1), this.auth.password);
    return user && password;
  }
}

/** Constant-time string equality. */
function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
