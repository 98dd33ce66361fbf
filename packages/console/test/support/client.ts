/**
 * A small HTTP client for the console's API that behaves like the page: it
 * keeps the session cookie, reads the CSRF token from /api/session and sends
 * it on every request after that (the API refuses reads without it too).
 */
export class ConsoleClient {
  private cookie = '';
  csrf = '';

  constructor(readonly base: string, private readonly extraHeaders: Record<string, string> = {}) {}

  /** Loads the page (session cookie) and the session (CSRF token). */
  async open(): Promise<Record<string, any>> {
    await this.request('GET', '/');
    const session = await this.json('GET', '/api/session');
    this.csrf = session.body.csrf;
    return session.body;
  }

  async get(path: string, query: Record<string, string | number> = {}): Promise<{ status: number; body: any }> {
    const params = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
    return this.json('GET', `${path}${params.size > 0 ? `?${params}` : ''}`);
  }

  async post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
    return this.json('POST', path, JSON.stringify(body), { 'Content-Type': 'application/json', 'X-BQ-CSRF': this.csrf, ...headers });
  }

  async json(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
    const response = await this.request(method, path, body, headers);
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: the text itself
    }
    return { status: response.status, body: parsed };
  }

  async request(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Response> {
    const response = await fetch(new URL(path, this.base), {
      method,
      redirect: 'manual',
      headers: { ...this.extraHeaders, ...(this.cookie ? { Cookie: this.cookie } : {}), ...(this.csrf ? { 'X-BQ-CSRF': this.csrf } : {}), ...headers },
      ...(body !== undefined ? { body } : {}),
    });
    const set = response.headers.getSetCookie();
    for (const line of set) this.cookie = line.split(';')[0] ?? '';
    return response;
  }
}
