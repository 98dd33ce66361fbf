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
 * 90 % of the queue, then asks two consoles in this process (the default scan
 * limit of 100,000, and a scan limit of N) over HTTP as the page does. Each
 * request is timed once after one warm-up page; the heap and RSS are sampled
 * every 20 ms during the requests. The key is deleted at the end.
 */
import { randomUUID } from 'node:crypto';
import { memoryUsage } from 'node:process';
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

/** The page's way in: the session cookie, then the CSRF token on every request. */
async function client(base: string) {
  const first = await fetch(new URL('/', base));
  const cookie = (first.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
  const session = (await (await fetch(new URL('/api/session', base), { headers: { Cookie: cookie } })).json()) as { csrf: string };
  return async (path: string, query: Record<string, string | number>) => {
    const started = performance.now();
    const params = new URLSearchParams({ dlq, ...Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])) });
    const response = await fetch(new URL(`${path}?${params}`, base), { headers: { Cookie: cookie, 'X-BQ-CSRF': session.csrf } });
    const json = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${JSON.stringify(json)}`);
    return { ms: Math.round(performance.now() - started), json };
  };
}

/** Peak heap and RSS (MiB) while `work` runs. */
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

async function measure(transport: RedisTransport, scanLimit: number) {
  const running = await startConsole({ transport, dlqs: [dlq], port: 0, logger: silentLogger, scanLimit, sampleEveryMs: 3_600_000 });
  try {
    const get = await client(running.url);
    await get('/api/records', { limit: 50 });
    const firstPage = await get('/api/records', { limit: 50 });
    const deepPage = await get('/api/records', { limit: 50, from: String(needleAt) });
    const search = await peakMemory(() => get('/api/records', { limit: 50, find: 'quartermaine' }));
    const byId = await get('/api/find', { id: needleId }).catch((error: Error) => ({ ms: -1, json: { error: error.message } as Record<string, unknown> }));
    const stats = await peakMemory(() => get('/api/stats', {}));
    const pick = (r: { ms: number; json: Record<string, unknown> }, ...keys: string[]) => ({ ms: r.ms, ...Object.fromEntries(keys.map((k) => [k, r.json[k]])) });
    return {
      scan_limit: scanLimit,
      first_page: pick(firstPage, 'scanned', 'depth'),
      page_at_90_percent: pick(deepPage, 'scanned'),
      search_by_data: { ...pick(search.result, 'scanned', 'limited', 'next'), found: (search.result.json.records as unknown[]).length, peak_heap_mib: search.heapMiB, peak_rss_mib: search.rssMiB },
      open_by_id: byId.ms < 0 ? { found: false, answer: byId.json.error } : pick(byId, 'scanned'),
      charts_and_groups: { ...pick(stats.result, 'scanned', 'group_count'), peak_heap_mib: stats.heapMiB, peak_rss_mib: stats.rssMiB },
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
  const defaults = await measure(transport, 100_000);
  const whole = await measure(transport, records);
  process.stdout.write(`${JSON.stringify({
    bench: 'console',
    broker: 'redis (legacy layout)',
    node: process.version,
    records,
    needle_at: needleAt,
    fill_ms: fillMs,
    redis_list_mib: Math.round(bytes / 2 ** 20),
    heap_before_mib: Math.round(before.heapUsed / 2 ** 20),
    rss_before_mib: Math.round(before.rss / 2 ** 20),
    default_scan_limit: defaults,
    scan_limit_all: whole,
  }, null, 2)}\n`);
} finally {
  await transport.client.del(dlq);
  await transport.close();
}
