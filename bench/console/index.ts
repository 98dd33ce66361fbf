/**
 * The DLQ console at scale on Redis: how long the first page, a search, an
 * open-by-id and the charts with failure groups take over a DLQ of N records,
 * and how much memory the console's process holds meanwhile. JSON out.
 *
 *   BABELQUEUE_REDIS_URL=redis://127.0.0.1:6379 \
 *     node --conditions=source --import tsx bench/console/index.ts [records=1000000]
 *
 * Fills `bench-console-<random>.dlq` with N dead-letter records (RPUSH of
 * 1,000 at a time, pipelined) in four failure groups, one record to find at
 * 90 % of the queue, then asks a console in this process (default settings:
 * a time budget of 1.5 s and a scan limit of 100,000 records per request)
 * over HTTP as the page does: the first answer of each read, then the page's
 * own carrying on (a search's `next`, the charts' `cursor`) until the record
 * is found or the counts are complete. The heap and RSS are sampled every
 * 20 ms; `peak_rss_mib` is the process's peak as the kernel counts it. The
 * key is deleted at the end.
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { memoryUsage, resourceUsage } from 'node:process';
import { silentLogger } from '@babelqueue/core';
import { startConsole } from '@babelqueue/console';
import { RedisTransport } from '@babelqueue/redis';

const records = Number(process.argv[2] ?? 1_000_000);
const url = process.env.BABELQUEUE_REDIS_URL ?? 'redis://127.0.0.1:6379';
const queue = `bench-console-${randomUUID().slice(0, 8)}`;
const dlq = `${queue}.dlq`;
const needleAt = Math.floor(records * 0.9);
const needleId = `needle-${randomUUID()}`;

function body(i: number): string {
  const kind = i % 4;
  const error = kind === 0 ? `order ${i} not found` : kind === 1 ? `gateway timeout after ${i % 30}s` : kind === 2 ? `stock ${i} reserved twice` : `card ${(i * 2654435761) % 4294967296} declined`;
  return JSON.stringify({
    job: kind === 3 ? 'urn:babel:payments:charge' : 'urn:babel:orders:created',
    trace_id: randomUUID(),
    data: { order_id: 100_000 + i, customer: i === needleAt ? 'Zoë Quartermaine' : `customer ${i}`, total: (i % 1000) + 0.5 },
    meta: { id: i === needleAt ? needleId : randomUUID(), queue, lang: i % 3 === 0 ? 'python' : 'node', schema_version: 1, created_at: 1_764_000_000_000 + i },
    attempts: 2,
    dead_letter: { reason: 'failed', error, exception: kind === 1 ? 'TimeoutError' : 'NotFound', failed_at: 1_764_000_000_000 + i * 50, original_queue: queue, attempts: 3, lang: 'node' },
  });
}

async function fill(transport: RedisTransport): Promise<number> {
  const started = Date.now();
  const batch = 1000;
  for (let from = 0; from < records; from += batch * 20) {
    const pipeline = transport.client.pipeline();
    for (let b = from; b < Math.min(records, from + batch * 20); b += batch) {
      const values: string[] = [];
      for (let i = b; i < Math.min(records, b + batch); i++) values.push(body(i));
      pipeline.rpush(dlq, ...values);
    }
    await pipeline.exec();
  }
  return Date.now() - started;
}

/** The fields of the API's answers this bench reads. */
interface Answer {
  scanned: number;
  depth?: number | null;
  limited?: boolean;
  stopped?: string | null;
  next?: number | null;
  records?: { index: number }[];
  record?: { index: number } | null;
  complete?: boolean;
  cursor?: string | null;
  group_count?: number;
}

/** The page's way in: the session cookie, then the CSRF token on every request. */
async function client(base: string) {
  const first = await fetch(new URL('/', base));
  const cookie = (first.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
  const session = (await (await fetch(new URL('/api/session', base), { headers: { Cookie: cookie } })).json()) as { csrf: string };
  return async (path: string, query: Record<string, string | number>) => {
    const started = performance.now();
    const params = new URLSearchParams({ dlq, ...Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])) });
    const response = await fetch(new URL(`${path}?${params}`, base), { headers: { Cookie: cookie, 'X-BQ-CSRF': session.csrf } });
    const json = (await response.json()) as Answer;
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${JSON.stringify(json)}`);
    return { ms: Math.round(performance.now() - started), json };
  };
}

type Get = Awaited<ReturnType<typeof client>>;

/** Peak heap and RSS (MiB) sampled while `work` runs. */
async function peakMemory<T>(work: () => Promise<T>): Promise<{ result: T; heapMiB: number; rssMiB: number }> {
  let heap = 0;
  let rss = 0;
  const sample = () => {
    const m = memoryUsage();
    heap = Math.max(heap, m.heapUsed);
    rss = Math.max(rss, m.rss);
  };
  const timer = setInterval(sample, 20);
  try {
    const result = await work();
    sample();
    return { result, heapMiB: Math.round(heap / 2 ** 20), rssMiB: Math.round(rss / 2 ** 20) };
  } finally {
    clearInterval(timer);
  }
}

/** Follows answers as the page does (`next` for pages and find, `cursor` for charts) until done; times each. */
async function carryOn(get: Get, path: string, query: Record<string, string | number>, done: (json: Answer) => boolean, step: (json: Answer) => Record<string, string | number>) {
  const started = performance.now();
  const times: number[] = [];
  let scanned = 0;
  let answer = await get(path, query);
  for (;;) {
    times.push(answer.ms);
    scanned = path === '/api/stats' ? answer.json.scanned : scanned + answer.json.scanned;
    if (done(answer.json)) break;
    answer = await get(path, { ...query, ...step(answer.json) });
  }
  return {
    answers: times.length,
    slowest_answer_ms: Math.max(...times),
    total_ms: Math.round(performance.now() - started),
    scanned,
    last: answer.json,
  };
}

async function measure(transport: RedisTransport) {
  const running = await startConsole({ transport, dlqs: [dlq], port: 0, logger: silentLogger, sampleEveryMs: 3_600_000 });
  try {
    const get = await client(running.url);
    await get('/api/records', { limit: 50 });
    const firstPage = await get('/api/records', { limit: 50 });
    const deepPage = await get('/api/records', { limit: 50, from: String(needleAt) });
    const firstSearch = await get('/api/records', { limit: 50, find: 'quartermaine' });
    const search = await peakMemory(() => carryOn(get, '/api/records', { limit: 50, find: 'quartermaine' }, (j) => (j.records ?? []).length > 0 || !j.limited, (j) => ({ from: j.next ?? 0 })));
    const firstFind = await get('/api/find', { id: needleId });
    const byId = await carryOn(get, '/api/find', { id: needleId }, (j) => j.record !== null, (j) => ({ from: j.next ?? 0 }));
    const firstStats = await get('/api/stats', {});
    // A page asked while a chart step reads the DLQ (the page loads both at once).
    const [, pageBesideCharts] = await Promise.all([get('/api/stats', {}), get('/api/records', { limit: 50 })]);
    const stats = await peakMemory(() => carryOn(get, '/api/stats', {}, (j) => j.complete === true, (j) => ({ cursor: j.cursor ?? '' })));
    const perRecordUs = (r: { total_ms: number; scanned: number }) => Math.round((r.total_ms * 1000) / Math.max(1, r.scanned));
    return {
      scan_budget_ms: 1500,
      scan_limit: 100_000,
      first_page: { ms: firstPage.ms, scanned: firstPage.json.scanned, depth: firstPage.json.depth },
      page_at_90_percent: { ms: deepPage.ms, scanned: deepPage.json.scanned },
      search_by_data: {
        first_answer: { ms: firstSearch.ms, scanned: firstSearch.json.scanned, stopped: firstSearch.json.stopped, next: firstSearch.json.next },
        to_the_record: { answers: search.result.answers, slowest_answer_ms: search.result.slowest_answer_ms, total_ms: search.result.total_ms, scanned: search.result.scanned, found_at: search.result.last.records?.[0]?.index ?? null, us_per_record: perRecordUs(search.result) },
        peak_heap_mib: search.heapMiB, peak_rss_mib: search.rssMiB,
      },
      open_by_id: {
        first_answer: { ms: firstFind.ms, scanned: firstFind.json.scanned, found: firstFind.json.record !== null },
        to_the_record: { answers: byId.answers, slowest_answer_ms: byId.slowest_answer_ms, total_ms: byId.total_ms, scanned: byId.scanned, found_at: byId.last.record?.index ?? null, us_per_record: perRecordUs(byId) },
      },
      charts_and_groups: {
        first_answer: { ms: firstStats.ms, scanned: firstStats.json.scanned, stopped: firstStats.json.stopped },
        first_page_beside_a_chart_step_ms: pageBesideCharts.ms,
        to_complete: { answers: stats.result.answers, slowest_answer_ms: stats.result.slowest_answer_ms, total_ms: stats.result.total_ms, scanned: stats.result.scanned, group_count: stats.result.last.group_count, us_per_record: perRecordUs(stats.result) },
        peak_heap_mib: stats.heapMiB, peak_rss_mib: stats.rssMiB,
      },
    };
  } finally {
    await running.close();
  }
}

const transport = new RedisTransport({ url, logger: silentLogger });
try {
  await transport.connect({ timeoutMs: 10_000 });
  const fillMs = await fill(transport);
  const bytes = Number(await transport.client.memory('USAGE', dlq));
  globalThis.gc?.();
  const before = memoryUsage();
  const console_ = await measure(transport);
  process.stdout.write(`${JSON.stringify({
    bench: 'console',
    broker: 'redis (legacy layout)',
    node: process.version,
    load_average: loadavg().map((l) => Math.round(l * 10) / 10),
    records,
    needle_at: needleAt,
    fill_ms: fillMs,
    redis_list_mib: Math.round(bytes / 2 ** 20),
    heap_before_mib: Math.round(before.heapUsed / 2 ** 20),
    rss_before_mib: Math.round(before.rss / 2 ** 20),
    ...console_,
    peak_rss_mib: Math.round(resourceUsage().maxRSS / 1024),
  }, null, 2)}\n`);
} finally {
  await transport.client.del(dlq);
  await transport.close();
}
