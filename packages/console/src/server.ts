import type { AddressInfo } from 'node:net';
import { CountedReadError } from '@babelqueue/core';
import { createAdaptorServer } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ASSETS } from './assets.generated.js';
import { deleteSelected, journaled, purgeAll, recover, redriveMatching, redriveSelected, UnsupportedActionError, type ActionContext, type RedriveRequest } from './actions.js';
import { AuditTrail, type AuditActor } from './audit.js';
import { deleteMatching } from './bulk-delete.js';
import { DepthHistory } from './depth-history.js';
import { depthsOf, discoverDlqs } from './discovery.js';
import { editAndRedrive, parseData } from './edit.js';
import { BadQueryError, parseFilter, parseMatching, parseSort } from './filter.js';
import { Journal, type InterruptedAction } from './journal.js';
import { KeyedLock } from './keyed-lock.js';
import { locate, type RecordRef } from './locate.js';
import { HISTORY_KEEP, PAGE_MAX, resolveSettings, SORT_WINDOW, type ConsoleOptions, type ConsoleSettings } from './options.js';
import { readPage } from './pages.js';
import { ScanBudget } from './scan-budget.js';
import { ProgressBoard } from './progress.js';
import { detail } from './records.js';
import { findById } from './search.js';
import { Guard } from './security.js';
import { CannotReadError, recordSource, type RecordSource } from './source.js';
import { ExpiredCursorError, GROUPS_SHOWN, StatsScans } from './stats.js';
import { checkTarget, UnknownTargetError } from './target.js';

/** A running console. */
export interface RunningConsole {
  /** Where it listens, e.g. `http://127.0.0.1:8794/` (with a token: add `?token=…` to open it). */
  readonly url: string;
  readonly port: number;
  /** Stops listening and sampling. The transport stays open (it is the caller's). */
  close(): Promise<void>;
}

/**
 * Starts the DLQ console: an HTTP server (Hono on node:http) serving one page
 * and a JSON API over `options.transport`. It reads through the Transport
 * contract (`scan`/`depth`, through the core's dead-letter reader), and moves records with `remove`
 * where the broker has it, else with the core's drain (redrive: ADR-0026;
 * delete: take and restore). Resolves once it listens.
 *
 * @example
 * ```ts
 * import { transportFromUrl } from '@babelqueue/core';
 * import { startConsole } from '@babelqueue/console';
 *
 * const transport = await transportFromUrl('redis://127.0.0.1:6379');
 * await transport.connect({ timeoutMs: 5000 });
 * const console_ = await startConsole({ transport, queues: ['orders'] });
 * process.stdout.write(`DLQ console on ${console_.url}\n`);
 * ```
 */
export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const settings = resolveSettings(options);
  const source = recordSource(settings.transport, { allowCountedReads: settings.allowCountedReads });
  const lock = new KeyedLock();
  // A depth read while a leased scan holds records would miss them: it waits like a read.
  const history = new DepthHistory(settings.dlqs, (dlq) => (source.mode === 'peek' ? lock.read(dlq, () => source.depth(dlq)) : lock.run(dlq, () => source.depth(dlq))), HISTORY_KEEP);
  const app = consoleApp(settings, source, history, lock);
  const server = createAdaptorServer({ fetch: app.fetch });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  history.start(settings.sampleEveryMs);
  const port = (server.address() as AddressInfo).port;
  const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  const url = `http://${host}:${port}/`;
  settings.logger.info({ url, dlqs: settings.dlqs, readOnly: settings.readOnly, auth: settings.auth.kind, reads: source.mode }, 'DLQ console listening');
  return {
    url,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        history.stop();
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}

function consoleApp(settings: ConsoleSettings, source: RecordSource, history: DepthHistory, lock: KeyedLock): Hono {
  const { transport, logger } = settings;
  const guard = new Guard(settings.auth, settings.host);
  const actions: ActionContext = { transport, source, logger, scanLimit: settings.scanLimit, idleMs: settings.idleMs };
  const journal = new Journal(settings.journalDir, `${transport.rules.name} ${transport.target}`);
  const audit = new AuditTrail(logger, settings.auditLog);
  // Actions a killed console left unfinished: shown by the page and refused new actions until finished.
  const interrupted = new Map<string, InterruptedAction>();
  for (const dlq of settings.dlqs) {
    const found = journal.interrupted(dlq);
    if (found === undefined) continue;
    interrupted.set(dlq, found);
    logger.warn({ dlq, action: found.action, startedAt: found.started_at, sent: found.sent.length, restored: found.restored.length }, 'console: an earlier action on this DLQ was interrupted; finish it from the page (POST /api/recover)');
  }
  const progress = new ProgressBoard();
  const chartScans = new StatsScans();
  /** The bounds of one read request. */
  const budget = () => new ScanBudget(settings.scanBudgetMs, settings.scanLimit);
  // DLQs found on the broker beside the configured ones (GET /api/overview): they can be opened too.
  const discovered = new Set<string>();
  const known = (dlq: string) => settings.dlqs.includes(dlq) || discovered.has(dlq);
  const app = new Hono();
  app.use('*', guard.headers(), guard.hostCheck(), guard.authenticate(), guard.csrf());
  app.use('/api/*', bodyLimit({ maxSize: 1024 * 1024, onError: (c) => c.json({ error: 'request body over 1 MiB' }, 413) }));

  app.get('/', (c) => {
    guard.sessionToken(c);
    return c.html(ASSETS.html);
  });
  app.get('/assets/app.js', (c) => c.body(ASSETS.js, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }));
  app.get('/assets/style.css', (c) => c.body(ASSETS.css, 200, { 'Content-Type': 'text/css; charset=utf-8' }));
  app.get('/favicon.svg', (c) => c.body(ASSETS.favicon, 200, { 'Content-Type': 'image/svg+xml' }));

  app.get('/api/session', (c) => c.json({
    csrf: guard.sessionToken(c),
    read_only: settings.readOnly,
    broker: { binding: transport.rules.name, target: transport.target },
    dlqs: settings.dlqs,
    reads: source.mode === 'none' ? 'none' : 'scan',
    // `peek` reads change nothing; `leased` ones hide what they read from consumers while they run (SQS, RabbitMQ).
    scan: source.mode,
    // How chosen records leave the DLQ: a binding without `remove` cannot delete one record in place.
    removes: typeof transport.remove === 'function' ? 'in-place' : 'take-and-restore',
    can: {
      depth: typeof transport.depth === 'function',
      remove: typeof transport.remove === 'function',
      redrive: typeof transport.publishRaw === 'function',
      bypass: transport.capabilities.headers,
      purge: typeof transport.purge === 'function',
      delete: typeof transport.remove === 'function' || (typeof transport.publishRaw === 'function'),
    },
    limits: { scan: settings.scanLimit, budget_ms: settings.scanBudgetMs, page: PAGE_MAX, sort_window: SORT_WINDOW },
    interrupted: [...interrupted.values()].map((i) => ({ dlq: i.dlq, action: i.action, started_at: i.started_at, copied: i.sent.length, written_back: i.restored.length })),
  }));

  app.get('/api/records', (c) => withDlq(c, async (dlq) => {
    const page = await readPage(source, dlq, {
      filter: parseFilter((n) => c.req.query(n)),
      sort: parseSort((n) => c.req.query(n)),
      from: integer(c.req.query('from'), 0, 'from'),
      offset: integer(c.req.query('offset'), 0, 'offset'),
      limit: Math.min(integer(c.req.query('limit'), 1, 'limit', 50), PAGE_MAX),
    }, { scanLimit: settings.scanLimit, budgetMs: settings.scanBudgetMs, sortWindow: SORT_WINDOW });
    history.record(dlq, page.depth);
    return c.json({ dlq, ...page });
  }));

  app.get('/api/record', (c) => withDlq(c, async (dlq) => {
    const ref: RecordRef = { index: integer(c.req.query('index'), 0, 'index'), hash: c.req.query('hash') ?? '' };
    const found = (await locate(source, dlq, [ref], settings.scanLimit)).get(ref);
    if (found === undefined) return c.json({ error: 'that record is no longer on the DLQ (redriven, deleted or taken meanwhile)' }, 404);
    return c.json({ dlq, record: detail(found) });
  }));

  // Charts and groups: one step of a chart scan (a new one, or `cursor`'s next step; see StatsScans).
  const statsStep = (c: Context, dlq: string) => chartScans.step(source, dlq, parseFilter((n) => c.req.query(n)), c.req.query('cursor') || undefined, budget());

  app.get('/api/stats', (c) => withDlq(c, async (dlq) => {
    const stats = await statsStep(c, dlq);
    history.record(dlq, stats.depth);
    return c.json({ dlq, ...stats, history: history.of(dlq) });
  }));

  app.get('/api/history', (c) => withDlq(c, async (dlq) => c.json({ dlq, history: history.of(dlq) }), false));

  // Open-by-id: a record by its meta.id (or the fingerprint of its bytes), for the page's #/record/<id> links.
  app.get('/api/find', (c) => withDlq(c, async (dlq) => {
    const id = (c.req.query('id') ?? '').trim();
    if (id === '') throw new BadQueryError('find needs "id": a meta.id or a record\'s 16-hex-digit fingerprint');
    const from = integer(c.req.query('from'), 0, 'from');
    const depth = await source.depth(dlq);
    const found = await findById(source, dlq, id, from, budget());
    if (found.record !== undefined) return c.json({ dlq, depth, from, scanned: found.scanned, record: detail(found.record) });
    // Stopped early: not found yet; `next` carries on (the page does it by itself).
    if (found.next !== null) return c.json({ dlq, depth, from, scanned: found.scanned, record: null, stopped: found.stopped, next: found.next });
    return c.json({ error: `no record with meta.id or fingerprint "${id}" among the ${found.scanned} records scanned${from > 0 ? ` from position ${from + 1}` : ''}`, depth, from, scanned: found.scanned }, 404);
  }));

  // Failure groups of the records passing the filter, with their aggregates.
  app.get('/api/groups', (c) => withDlq(c, async (dlq) => {
    const stats = await statsStep(c, dlq);
    return c.json({ dlq, depth: stats.depth, scanned: stats.scanned, complete: stats.complete, stopped: stats.stopped, cursor: stats.cursor, next: stats.next, matched: stats.matched, groups: stats.groups, group_count: stats.group_count, shown: GROUPS_SHOWN, ungrouped: stats.ungrouped });
  }));

  // How far the running action on a DLQ got (not under the DLQ's lock: the action holds it).
  app.get('/api/progress', (c) => withDlq(c, async (dlq) => c.json({ dlq, running: progress.of(dlq) }), false));

  // Every DLQ of the broker, configured or discovered, with its depth.
  app.get('/api/overview', async (c) => {
    try {
      const found = await discoverDlqs(transport);
      for (const dlq of found.dlqs) discovered.add(dlq);
      const names = [...new Set([...settings.dlqs, ...found.dlqs])];
      const dlqs = await depthsOf(names, settings.dlqs, (name) => source.depth(name));
      return c.json({ discovery: { supported: found.supported, ...(found.note !== undefined ? { note: found.note } : {}) }, dlqs, total: dlqs.reduce((sum, d) => sum + (d.depth ?? 0), 0) });
    } catch (error) {
      return failure(c, error);
    }
  });

  app.post('/api/recover', (c) => action(c, [], async (dlq) => {
    const found = interrupted.get(dlq);
    if (found === undefined) throw new BadQueryError(`no interrupted action on ${dlq}`);
    const result = await recover(actions, dlq, found);
    if (result.error === undefined) {
      interrupted.delete(dlq);
      journal.end(dlq);
    }
    return result;
  }, false));

  app.post('/api/redrive', (c) => action(c, ['records', 'matching', 'to', 'bypass', 'create'], async (dlq, body, actions) => {
    const request = await redriveRequest(dlq, body);
    if ((body.matching === undefined) === (body.records === undefined)) throw new BadQueryError('a redrive names its records: "records" (a list) or "matching" (a filter, or "all"), one of them');
    if (body.matching !== undefined) {
      const matching = parseMatching(body.matching);
      return redriveMatching(actions, dlq, matching === 'all' ? {} : matching, request);
    }
    return redriveSelected(actions, dlq, refsOf(body.records), request);
  }));

  app.post('/api/edit', (c) => action(c, ['record', 'data', 'to', 'bypass', 'create'], async (dlq, body, actions) => {
    const [ref] = refsOf([body.record]);
    const data = parseData(body.data);
    return editAndRedrive(actions, dlq, ref!, data, await redriveRequest(dlq, body), (hash) => journal.mark(dlq, 'sent', hash));
  }));

  app.get('/api/audit', (c) => {
    try {
      return c.json(audit.entries(Math.min(integer(c.req.query('limit'), 1, 'limit', 100), 500)));
    } catch (error) {
      return failure(c, error);
    }
  });

  app.post('/api/delete', (c) => action(c, ['records', 'matching'], (dlq, body, actions) => {
    if ((body.matching === undefined) === (body.records === undefined)) throw new BadQueryError('a delete names its records: "records" (a list) or "matching" (a filter), one of them');
    if (body.matching === undefined) return deleteSelected(actions, dlq, refsOf(body.records));
    const matching = parseMatching(body.matching);
    // Deleting every record is a purge, which asks for the DLQ's name.
    if (matching === 'all') throw new BadQueryError('delete "matching" takes a filter; to delete every record, purge');
    return deleteMatching(actions, dlq, matching);
  }));

  app.post('/api/purge', (c) => action(c, ['confirm'], async (dlq, body, actions) => {
    if (body.confirm !== dlq) throw new BadQueryError(`purge needs "confirm": the DLQ's name (${dlq})`);
    return purgeAll(actions, dlq);
  }));

  app.notFound((c) => c.json({ error: 'not found' }, 404));
  app.onError((error, c) => {
    logger.error({ path: c.req.path, error: error.message }, 'console request failed');
    return c.json({ error: 'internal error' }, 500);
  });
  return app;

  /**
   * Runs the read `work` for the request's `dlq` (a configured or discovered
   * one) under that DLQ's lock, mapping errors to statuses. Where reads peek,
   * reads share the lock (a search step never holds up the next page) and
   * only wait for actions; a leased read (RabbitMQ, SQS) holds what it reads,
   * so there each read has the DLQ to itself.
   */
  async function withDlq(c: Context, work: (dlq: string) => Promise<Response>, locked = true): Promise<Response> {
    const dlq = c.req.query('dlq') ?? '';
    if (!known(dlq)) return c.json({ error: `unknown DLQ "${dlq}"; this console shows ${settings.dlqs.join(', ')}` }, 404);
    try {
      if (!locked) return await work(dlq);
      return await (source.mode === 'peek' ? lock.read(dlq, () => work(dlq)) : lock.run(dlq, () => work(dlq)));
    } catch (error) {
      return failure(c, error);
    }
  }

  /**
   * Runs an action: `keys` are the body's members beside `dlq`; any other
   * member is a 400 (a misspelt one would be ignored). Journaled (see
   * {@link Journal}) through a transport that notes every write; the journal
   * stays when the action stops on an error, as after a kill.
   */
  async function action(
    c: Context,
    keys: readonly string[],
    work: (dlq: string, body: Record<string, unknown>, ctx: ActionContext) => Promise<{ error?: string; dlq: string }>,
    journaling = true,
  ): Promise<Response> {
    if (settings.readOnly) return c.json({ error: 'this console is read-only' }, 403);
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return c.json({ error: 'the body is not JSON' }, 400);
    }
    if (!isRecord(body)) return c.json({ error: 'the body must be a JSON object' }, 400);
    const json = body;
    const dlq = typeof json.dlq === 'string' ? json.dlq : '';
    if (!known(dlq)) return c.json({ error: `unknown DLQ "${dlq}"` }, 404);
    const unknown = Object.keys(json).filter((key) => key !== 'dlq' && !keys.includes(key));
    if (unknown.length > 0) return c.json({ error: `unknown member${unknown.length === 1 ? '' : 's'} ${unknown.map((k) => `"${k}"`).join(', ')}; this action takes dlq, ${keys.join(', ')}` }, 400);
    try {
      const result = await lock.run(dlq, async () => {
        if (!journaling) return work(dlq, json, actions);
        const left = interrupted.get(dlq);
        if (left !== undefined) throw new InterruptedError(dlq, left);
        journal.begin(dlq, c.req.path.replace('/api/', ''));
        const counted = progress.begin(dlq, c.req.path.replace('/api/', ''), journaled(transport, dlq, journal));
        let done: Awaited<ReturnType<typeof work>>;
        try {
          done = await work(dlq, json, { ...actions, transport: counted });
        } catch (error) {
          // Refused before any write (a bad request, a "to" to confirm): nothing is in two places.
          const left = journal.interrupted(dlq);
          if (left !== undefined && left.sent.length + left.restored.length === 0) journal.end(dlq);
          throw error;
        } finally {
          progress.end(dlq);
        }
        if (done.error === undefined) journal.end(dlq);
        else interrupted.set(dlq, journal.interrupted(dlq) as InterruptedAction);
        return done;
      });
      void history.sampleAll();
      audit.note(c.req.path.replace('/api/', ''), result, actor(c), `${transport.rules.name} ${transport.target}`, {
        filter: json.matching === undefined ? null : json.matching === 'all' ? 'all' : (json.matching as Record<string, unknown>),
        target: typeof json.to === 'string' ? json.to.trim() : c.req.path === '/api/redrive' || c.req.path === '/api/edit' ? 'its own queue' : null,
      });
      const status = statusOf(result);
      const retryAfter = (result as { retry_after_s?: number }).retry_after_s;
      return c.json(result, status, (status === 423 || status === 503) && retryAfter !== undefined ? { 'Retry-After': String(retryAfter) } : {});
    } catch (error) {
      return failure(c, error);
    }
  }

  /** A redrive's options from its body; a `to` is checked first (see {@link checkTarget}). */
  async function redriveRequest(dlq: string, body: Record<string, unknown>): Promise<RedriveRequest> {
    if (body.bypass !== undefined && typeof body.bypass !== 'boolean') throw new BadQueryError('"bypass" must be true or false');
    if (body.create !== undefined && typeof body.create !== 'boolean') throw new BadQueryError('"create" must be true or false');
    if (body.to !== undefined && (typeof body.to !== 'string' || body.to.trim() === '')) throw new BadQueryError('"to" must be a queue name');
    if (typeof body.to === 'string') await checkTarget(transport, dlq, settings.dlqs, body.to.trim(), body.create === true);
    return { bypass: body.bypass === true, ...(typeof body.to === 'string' ? { toQueue: body.to.trim() } : {}) };
  }

  /** Who sent the request, for the audit trail. */
  function actor(c: Context): AuditActor {
    let address: string | null = null;
    try {
      address = getConnInfo(c).remote.address ?? null;
    } catch {
      // not served by node:http (a test's app.fetch): no socket
    }
    return { address, user: settings.auth.kind === 'basic' ? settings.auth.username : null, auth: settings.auth.kind };
  }

  function failure(c: Context, error: unknown): Response {
    const message = redact(error instanceof Error ? error.message : String(error));
    if (error instanceof BadQueryError || error instanceof RangeError || error instanceof UnsupportedActionError) return c.json({ error: message }, 400);
    if (error instanceof CannotReadError) return c.json({ error: message, reads: 'none' }, 409);
    if (error instanceof ExpiredCursorError) return c.json({ error: message, expired: true }, 410);
    if (error instanceof CountedReadError) return c.json({ error: message, reads: 'refused' }, 409);
    if (error instanceof InterruptedError) return c.json({ error: message, interrupted: true }, 409);
    if (error instanceof UnknownTargetError) return c.json({ error: message, confirm: 'create', target: error.target }, 409);
    logger.warn({ path: c.req.path, error: message }, 'console: broker operation failed');
    return c.json({ error: `the broker failed: ${message}` }, 502);
  }
}

/**
 * 502 when the broker stopped the action (503 when it says when to try
 * again: a recover waiting for held records to come back); 423 (Locked, with `Retry-After`
 * and `retry_after_s`) when every chosen record it could have acted on is
 * locked by another receiver; else 200.
 */
function statusOf(result: { error?: string; locked?: number; redriven?: number; deleted?: number; retry_after_s?: number }): 200 | 423 | 502 | 503 {
  if (result.error !== undefined) return result.retry_after_s !== undefined ? 503 : 502;
  return (result.locked ?? 0) > 0 && (result.redriven ?? 0) + (result.deleted ?? 0) === 0 ? 423 : 200;
}

/** A new action on a DLQ whose earlier action was interrupted: finish that one first. */
class InterruptedError extends Error {
  constructor(dlq: string, left: InterruptedAction) {
    super(`an earlier ${left.action} on ${dlq} (started ${new Date(left.started_at).toISOString()}) was interrupted: ${left.sent.length} record(s) copied to their target and ${left.restored.length} written back may also still be on the DLQ; finish it first (POST /api/recover, or the page's Finish button)`);
  }
}

function refsOf(value: unknown): RecordRef[] {
  if (!Array.isArray(value) || value.length === 0) throw new BadQueryError('"records" must be a non-empty list of {index, hash}');
  if (value.length > PAGE_MAX * 5) throw new BadQueryError(`at most ${PAGE_MAX * 5} records at once; use "matching" for more`);
  return value.map((entry) => {
    if (!isRecord(entry) || !Number.isSafeInteger(entry.index) || (entry.index as number) < 0 || typeof entry.hash !== 'string' || !/^[0-9a-f]{16}$/.test(entry.hash)) {
      throw new BadQueryError('each record is {"index": n, "hash": "<16 hex digits>"}');
    }
    return { index: entry.index as number, hash: entry.hash };
  });
}

function integer(raw: string | undefined, min: number, name: string, fallback = min): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min) throw new BadQueryError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Credentials a broker error may echo (`scheme://user:pass@`) are masked. */
function redact(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/\s@]*@/gi, '$1***@');
}
