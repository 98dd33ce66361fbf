import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { ConfigurationError, InMemoryTransport, REPLAY_BYPASS_HEADER } from '@babelqueue/core';
import { startConsole, type RunningConsole } from '../src/index.js';
import { captureLogger } from '../../../test/support/capture-logger.js';
import { ConsoleClient } from './support/client.js';
import { foreignRecord, poison, XSS } from './support/records.js';

const SECRET = 'payload-marker-7f3a';

async function consoleOn(transport: InMemoryTransport, options: Record<string, unknown> = {}) {
  const logger = captureLogger();
  const running = await startConsole({ transport, queues: ['orders'], port: 0, logger, journalDir: mkdtempSync(join(tmpdir(), 'bq-console-journal-')), ...options });
  const client = new ConsoleClient(running.url);
  return { running, client, logger };
}

describe('console API over the in-memory transport', () => {
  describe('pages, filters, sort and the full view', () => {
    const transport = new InMemoryTransport();
    let running: RunningConsole;
    let client: ConsoleClient;
    const t0 = 1_750_000_000_000;

    before(async () => {
      for (let i = 0; i < 120; i++) {
        await transport.publishRaw('orders.dlq', foreignRecord({
          urn: i % 2 === 0 ? 'urn:babel:orders:created' : 'urn:babel:mail:send',
          queue: 'orders',
          lang: ['php', 'go', 'python'][i % 3]!,
          dlLang: i % 2 === 0 ? 'node' : 'java',
          reason: i % 10 === 0 ? 'unknown_urn' : 'failed',
          error: i === 77 ? 'Deadlock found when trying to get lock' : `error number ${i}`,
          failedAt: t0 + i * 1000,
          attempts: (i % 5) + 1,
        }));
      }
      ({ running, client } = await consoleOn(transport));
      await client.open();
    });
    after(async () => {
      await running.close();
    });

    it('pages in queue order: only the page is returned, with "scanned N of M" and where the next page starts', async () => {
      const first = await client.get('/api/records', { dlq: 'orders.dlq', limit: 50 });
      assert.equal(first.status, 200);
      assert.equal(first.body.records.length, 50);
      assert.deepEqual([first.body.records[0].index, first.body.records[49].index], [0, 49]);
      assert.equal(first.body.depth, 120);
      assert.equal(first.body.scanned, 51, 'one past the page, to know more follow');
      assert.equal(first.body.has_more, true);
      assert.equal(first.body.next, 50);
      const last = await client.get('/api/records', { dlq: 'orders.dlq', limit: 50, from: 100 });
      assert.deepEqual(last.body.records.map((r: any) => r.index), Array.from({ length: 20 }, (_, i) => 100 + i));
      assert.equal(last.body.complete, true);
      assert.equal(last.body.has_more, false);
      const row = last.body.records[0];
      assert.equal(row.urn, 'urn:babel:orders:created');
      assert.equal(row.lang, 'go');
      assert.equal(row.dead_letter_lang, 'node');
      assert.equal(row.reason, 'unknown_urn');
      assert.equal(row.original_queue, 'orders');
      assert.equal(row.failed_at, t0 + 100_000);
      assert.equal(row.attempts, 1);
      assert.match(row.hash, /^[0-9a-f]{16}$/);
      assert.equal(row.data, undefined, 'no payload in a row');
    });

    it('filters by reason, URN, producing and dead-lettering language, time and error words', async () => {
      const get = async (query: Record<string, string | number>) =>
        (await client.get('/api/records', { dlq: 'orders.dlq', limit: 200, ...query })).body.records.map((r: any) => r.index);
      assert.deepEqual(await get({ reason: 'unknown_urn' }), [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110]);
      assert.equal((await get({ urn: 'MAIL' })).length, 60, 'a part of the URN, any case');
      assert.deepEqual((await get({ lang: 'php', dl_lang: 'java' })).slice(0, 3), [3, 9, 15]);
      assert.deepEqual(await get({ since: t0 + 5000, until: t0 + 7000 }), [5, 6, 7]);
      assert.deepEqual(await get({ since: new Date(t0 + 118_000).toISOString() }), [118, 119]);
      assert.deepEqual(await get({ q: 'lock deadlock' }), [77], 'every word, any case, anywhere in the error');
      const bad = await client.get('/api/records', { dlq: 'orders.dlq', since: 'yesterday' });
      assert.equal(bad.status, 400);
      assert.match(bad.body.error, /since must be/);
    });

    it('sorts over the whole DLQ keeping only the best rows, and pages through them', async () => {
      const page = await client.get('/api/records', { dlq: 'orders.dlq', sort: 'failed_at', dir: 'desc', limit: 5 });
      assert.deepEqual(page.body.records.map((r: any) => r.index), [119, 118, 117, 116, 115]);
      assert.equal(page.body.matched, 120);
      assert.equal(page.body.has_more, true);
      const next = await client.get('/api/records', { dlq: 'orders.dlq', sort: 'attempts', dir: 'desc', limit: 3, offset: 3 });
      assert.deepEqual(next.body.records.map((r: any) => [r.attempts, r.index]), [[5, 19], [5, 24], [5, 29]]);
      const tooFar = await client.get('/api/records', { dlq: 'orders.dlq', sort: 'urn', offset: 5000, limit: 50 });
      assert.equal(tooFar.status, 400);
      assert.equal((await client.get('/api/records', { dlq: 'orders.dlq', sort: 'body' })).status, 400);
    });

    it('charts: counts by reason, URN and language pair over the scanned records', async () => {
      const stats = await client.get('/api/stats', { dlq: 'orders.dlq' });
      assert.deepEqual(stats.body.by_reason, { unknown_urn: 12, failed: 108 });
      assert.deepEqual(stats.body.by_urn, { 'urn:babel:orders:created': 60, 'urn:babel:mail:send': 60 });
      assert.equal(stats.body.by_lang['php → node'], 20);
      assert.equal(stats.body.depth, 120);
      assert.ok(stats.body.history.length >= 1, 'the depth history has its first sample');
      assert.equal((await client.get('/api/stats', { dlq: 'orders.dlq', reason: 'unknown_urn' })).body.matched, 12);
    });

    it('answers only for the configured DLQs', async () => {
      const other = await client.get('/api/records', { dlq: 'secrets' });
      assert.equal(other.status, 404);
      assert.match(other.body.error, /this console shows orders\.dlq/);
    });
  });

  it('the full view keeps the stored text exactly, shows native metadata and decodes a poison record', async () => {
    const transport = new InMemoryTransport();
    const big = Buffer.from('{"job":"urn:babel:t:x","trace_id":"t-1","data":{"n":12345678901234567890,"f":1.0},"meta":{"id":"m-1","queue":"orders","lang":"php","schema_version":1,"created_at":1},"attempts":2,"dead_letter":{"reason":"failed","error":"e","exception":null,"failed_at":5,"original_queue":"orders","attempts":3,"lang":"php"}}');
    await transport.publishRaw('orders.dlq', big, { traceparent: '00-abc-def-01' });
    await transport.publishRaw('orders.dlq', poison(Buffer.from([0xff, 0x0e]), 'orders'));
    await transport.publishRaw('orders.dlq', poison(XSS, 'orders', 'body is not a JSON object'));
    await transport.publishRaw('orders.dlq', Buffer.from([0x80, 0x81]));
    const { running, client } = await consoleOn(transport);
    try {
      await client.open();
      const rows = (await client.get('/api/records', { dlq: 'orders.dlq' })).body.records;
      const view = async (i: number) => (await client.get('/api/record', { dlq: 'orders.dlq', index: rows[i].index, hash: rows[i].hash })).body.record;
      const envelope = await view(0);
      assert.equal(envelope.body.text, big.toString(), 'byte for byte: 12345678901234567890 and 1.0 as stored');
      assert.deepEqual(envelope.headers, { traceparent: '00-abc-def-01' });
      assert.equal(envelope.dead_letter.reason, 'failed');
      const binary = await view(1);
      assert.equal(binary.kind, 'poison');
      assert.deepEqual(binary.raw, { encoding: 'base64', text: null, hex: 'ff 0e', bytes: 2 });
      const markup = await view(2);
      assert.equal(markup.raw.text, XSS, 'raw text handed over as text; the page inserts it as a text node');
      const notJson = await view(3);
      assert.equal(notJson.kind, 'not-json');
      assert.deepEqual(notJson.body, { encoding: 'base64', text: 'gIE=' });
      const gone = await client.get('/api/record', { dlq: 'orders.dlq', index: 0, hash: '0000000000000000' });
      assert.equal(gone.status, 404);
    } finally {
      await running.close();
    }
  });

  describe('actions', () => {
    it('redrive selected: the ADR-0026 reset body to the original queue (or another), riders kept, bypass on request; poison stays', async () => {
      const transport = new InMemoryTransport();
      const record = foreignRecord({ urn: 'urn:babel:orders:created', queue: 'orders', lang: 'php', dlLang: 'php', attempts: 3, data: { note: SECRET } });
      await transport.publishRaw('orders.dlq', record, { traceparent: 'tp-1' });
      await transport.publishRaw('orders.dlq', poison(XSS, 'orders'));
      const second = foreignRecord({ urn: 'urn:babel:orders:created', queue: 'orders', lang: 'go', dlLang: 'go', data: { note: SECRET } });
      await transport.publishRaw('orders.dlq', second);
      const { running, client, logger } = await consoleOn(transport);
      try {
        await client.open();
        const rows = (await client.get('/api/records', { dlq: 'orders.dlq' })).body.records;
        const refs = rows.slice(0, 2).map((r: any) => ({ index: r.index, hash: r.hash }));
        const result = await client.post('/api/redrive', { dlq: 'orders.dlq', records: refs, bypass: true });
        assert.equal(result.status, 200, JSON.stringify(result.body));
        assert.equal(result.body.method, 'remove');
        assert.deepEqual([result.body.redriven, result.body.kept, result.body.not_found], [1, 1, 0]);
        const [sent] = transport.broker.ready('orders');
        const expected = JSON.parse(record.toString());
        delete expected.dead_letter;
        expected.attempts = 0;
        assert.equal(sent!.body.toString(), JSON.stringify(expected), 'dead_letter removed, attempts 0, nothing else touched');
        assert.equal(sent!.headers.traceparent, 'tp-1');
        assert.equal(sent!.headers[REPLAY_BYPASS_HEADER], '1');
        assert.equal(transport.messages('orders.dlq').length, 2, 'the poison record and the third one stay');
        const other = await client.post('/api/redrive', { dlq: 'orders.dlq', records: [{ index: rows[2].index, hash: rows[2].hash }], to: 'orders-replay', create: true });
        assert.equal(other.body.redriven, 1);
        assert.equal(transport.messages('orders-replay').length, 1);
        const again = await client.post('/api/redrive', { dlq: 'orders.dlq', records: [{ index: rows[2].index, hash: rows[2].hash }] });
        assert.deepEqual([again.body.redriven, again.body.not_found], [0, 1], 'a record already gone is reported, not moved twice');
        assert.doesNotMatch(logger.text(), new RegExp(SECRET), 'no message body in the server log');
        assert.match(logger.text(), /console: redrive/);
      } finally {
        await running.close();
      }
    });

    it('redrive all matching moves only the matching records; delete removes the selected ones; purge needs the DLQ name', async () => {
      const transport = new InMemoryTransport();
      for (let i = 0; i < 450; i++) {
        await transport.publishRaw('orders.dlq', foreignRecord({ urn: i % 3 === 0 ? 'urn:babel:mail:send' : 'urn:babel:orders:created', queue: 'orders', lang: 'php', dlLang: 'php', data: { i } }));
      }
      const { running, client } = await consoleOn(transport);
      try {
        await client.open();
        const moved = await client.post('/api/redrive', { dlq: 'orders.dlq', matching: { urn: 'mail' } });
        assert.equal(moved.body.redriven, 150);
        assert.equal(transport.messages('orders').length, 150);
        assert.ok(transport.messages('orders').every((b) => b.toString().includes('urn:babel:mail:send')), 'only the matching URN moved');
        assert.equal(transport.messages('orders.dlq').length, 300);
        const rows = (await client.get('/api/records', { dlq: 'orders.dlq', limit: 3 })).body.records;
        const deleted = await client.post('/api/delete', { dlq: 'orders.dlq', records: rows.map((r: any) => ({ index: r.index, hash: r.hash })) });
        assert.deepEqual([deleted.body.deleted, deleted.body.method], [3, 'remove']);
        assert.equal(transport.messages('orders.dlq').length, 297);
        const unconfirmed = await client.post('/api/purge', { dlq: 'orders.dlq', confirm: 'orders' });
        assert.equal(unconfirmed.status, 400);
        assert.equal(transport.messages('orders.dlq').length, 297);
        const purged = await client.post('/api/purge', { dlq: 'orders.dlq', confirm: 'orders.dlq' });
        assert.equal(purged.body.deleted, 297);
        assert.equal((await client.get('/api/records', { dlq: 'orders.dlq' })).body.depth, 0);
      } finally {
        await running.close();
      }
    });

    it('a write that fails midway loses nothing: the record stays on the DLQ and the counts say how far it got', async () => {
      let refuse = false;
      const transport = new InMemoryTransport({ beforeWrite: (queue) => {
        if (refuse && queue === 'orders') throw new Error('broker said no');
      } });
      for (let i = 0; i < 3; i++) await transport.publishRaw('orders.dlq', foreignRecord({ urn: 'urn:babel:t:x', queue: 'orders', lang: 'php', dlLang: 'php', data: { i } }));
      const { running, client } = await consoleOn(transport);
      try {
        await client.open();
        const rows = (await client.get('/api/records', { dlq: 'orders.dlq' })).body.records;
        refuse = true;
        const result = await client.post('/api/redrive', { dlq: 'orders.dlq', records: rows.map((r: any) => ({ index: r.index, hash: r.hash })) });
        assert.equal(result.status, 502);
        assert.match(result.body.error, /broker said no/);
        assert.equal(result.body.redriven, 0);
        assert.equal(transport.messages('orders.dlq').length, 3, 'every record still on the DLQ');
      } finally {
        await running.close();
      }
    });

    it('a redrive stopped between the copy and the removal (a kill) is found at the next start, refuses new actions and is finished: each record on one side', async () => {
      let dies = false;
      class Dying extends InMemoryTransport {
        override async remove(queue: string, body: Buffer): Promise<boolean> {
          if (dies) throw new Error('process killed');
          return super.remove(queue, body);
        }
      }
      const transport = new Dying();
      for (let i = 0; i < 3; i++) await transport.publishRaw('orders.dlq', foreignRecord({ urn: 'urn:babel:t:x', queue: 'orders', lang: 'php', dlLang: 'php', data: { i } }));
      const journalDir = mkdtempSync(join(tmpdir(), 'bq-console-journal-'));
      const first = await consoleOn(transport, { journalDir });
      try {
        await first.client.open();
        dies = true;
        const stopped = await first.client.post('/api/redrive', { dlq: 'orders.dlq', matching: 'all' });
        assert.equal(stopped.status, 502);
      } finally {
        await first.running.close();
      }
      dies = false;
      assert.equal(transport.messages('orders').length, 1, 'the first copy reached its target');
      assert.equal(transport.messages('orders.dlq').length, 3, 'and its original is still on the DLQ: on both sides');
      const next = await consoleOn(transport, { journalDir });
      try {
        const session = await next.client.open();
        assert.deepEqual(session.interrupted.map((i: any) => [i.dlq, i.action, i.copied]), [['orders.dlq', 'redrive', 1]]);
        assert.match(next.logger.text(), /was interrupted/);
        const refused = await next.client.post('/api/delete', { dlq: 'orders.dlq', records: [{ index: 0, hash: '0'.repeat(16) }] });
        assert.equal(refused.status, 409);
        assert.match(refused.body.error, /interrupted.*finish it first/);
        const finished = await next.client.post('/api/recover', { dlq: 'orders.dlq' });
        assert.equal(finished.status, 200, JSON.stringify(finished.body));
        assert.equal(finished.body.deleted, 1);
        assert.equal(transport.messages('orders.dlq').length, 2, 'the redriven record left the DLQ; the two never copied stay');
        assert.equal(transport.messages('orders').length, 1);
        assert.deepEqual((await next.client.open()).interrupted, []);
        const rest = await next.client.post('/api/redrive', { dlq: 'orders.dlq', matching: 'all' });
        assert.equal(rest.body.redriven, 2, 'actions run again');
      } finally {
        await next.running.close();
      }
      const third = await consoleOn(transport, { journalDir });
      try {
        assert.deepEqual((await third.client.open()).interrupted, [], 'a finished action leaves no journal');
      } finally {
        await third.running.close();
      }
    });

    it('a read-only console hides nothing it should not and refuses every action', async () => {
      const transport = new InMemoryTransport();
      await transport.publishRaw('orders.dlq', foreignRecord({ urn: 'urn:babel:t:x', queue: 'orders', lang: 'php', dlLang: 'php' }));
      const { running, client } = await consoleOn(transport, { readOnly: true });
      try {
        const session = await client.open();
        assert.equal(session.read_only, true);
        assert.equal((await client.get('/api/records', { dlq: 'orders.dlq' })).body.records.length, 1);
        for (const [path, body] of [['/api/redrive', { matching: {} }], ['/api/delete', { records: [{ index: 0, hash: '0'.repeat(16) }] }], ['/api/purge', { confirm: 'orders.dlq' }]] as const) {
          const refused = await client.post(path, { dlq: 'orders.dlq', ...body });
          assert.equal(refused.status, 403, path);
        }
        assert.equal(transport.messages('orders.dlq').length, 1);
      } finally {
        await running.close();
      }
    });

    it('a bulk redrive with an unknown or mistyped filter, or none, is a 400 and moves nothing; every record only with "matching": "all"', async () => {
      const transport = new InMemoryTransport();
      for (let i = 0; i < 20; i++) {
        await transport.publishRaw('orders.dlq', foreignRecord({ urn: i < 2 ? 'urn:babel:mail:send' : 'urn:babel:orders:created', queue: 'orders', lang: 'php', dlLang: 'php', data: { i } }));
      }
      const { running, client } = await consoleOn(transport);
      try {
        await client.open();
        for (const [body, message] of [
          [{ matching: { urnn: 'mail' } }, /unknown filter "urnn"/],
          [{ matching: { urn: 5 } }, /"urn" in "matching" must be a string/],
          [{ matching: { urn: ['mail'] } }, /must be a string, got an array/],
          [{ matching: { urn: null } }, /must be a string, got null/],
          [{ matching: {} }, /narrows nothing.*"matching": "all"/],
          [{ matching: { urn: '  ' } }, /narrows nothing/],
          [{ matching: 'everything' }, /"matching" must be an object/],
          [{ matching: { urn: 'mail' }, records: [] }, /one of them/],
          [{ matchng: { urn: 'mail' } }, /unknown member "matchng"/],
          [{ matching: { urn: 'mail' }, bypass: 'yes' }, /"bypass" must be true or false/],
          [{ matching: { urn: 'mail' }, to: 7 }, /"to" must be a queue name/],
        ] as const) {
          const refused = await client.post('/api/redrive', { dlq: 'orders.dlq', ...body });
          assert.equal(refused.status, 400, JSON.stringify(body));
          assert.match(refused.body.error, message, JSON.stringify(body));
          assert.equal(transport.messages('orders.dlq').length, 20, `nothing moved for ${JSON.stringify(body)}`);
        }
        assert.equal((await client.post('/api/delete', { dlq: 'orders.dlq', records: [{ index: 0, hash: '0'.repeat(16) }], all: true })).status, 400, 'an unknown member of a delete');
        const some = await client.post('/api/redrive', { dlq: 'orders.dlq', matching: { urn: 'mail' } });
        assert.equal(some.body.redriven, 2);
        const all = await client.post('/api/redrive', { dlq: 'orders.dlq', matching: 'all' });
        assert.equal(all.body.redriven, 18);
        assert.equal(transport.messages('orders.dlq').length, 0);
      } finally {
        await running.close();
      }
    });
  });

  describe('security', () => {
    const transport = new InMemoryTransport();
    let running: RunningConsole;
    before(async () => {
      await transport.publishRaw('orders.dlq', foreignRecord({ urn: 'urn:babel:t:x', queue: 'orders', lang: 'php', dlLang: 'php' }));
      ({ running } = await consoleOn(transport));
    });
    after(async () => {
      await running.close();
    });

    it('every response forbids inline script and framing; the page loads only its own script', async () => {
      const client = new ConsoleClient(running.url);
      const page = await client.request('GET', '/');
      const csp = page.headers.get('content-security-policy') ?? '';
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
      const html = await page.text();
      assert.doesNotMatch(html, /<script>(?!<)/, 'no inline script');
      assert.match(html, /<script src="\/assets\/app\.js" defer><\/script>/);
      assert.doesNotMatch(html, /https?:\/\//, 'nothing from a CDN');
      const cookie = page.headers.getSetCookie()[0] ?? '';
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Strict/);
      const script = await client.request('GET', '/assets/app.js');
      assert.doesNotMatch(await script.text(), /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/, 'record text never parsed as HTML');
      const api = await client.request('GET', '/api/session');
      assert.match(api.headers.get('content-security-policy') ?? '', /default-src 'none'/);
      assert.equal(api.headers.get('cache-control'), 'no-store');
    });

    it('a POST needs the session CSRF token, a JSON body and a same-origin Origin', async () => {
      const client = new ConsoleClient(running.url);
      await client.open();
      const body = { dlq: 'orders.dlq', confirm: 'orders.dlq' };
      assert.equal((await client.post('/api/purge', body, { 'X-BQ-CSRF': 'forged' })).status, 403);
      const stranger = new ConsoleClient(running.url);
      await stranger.open();
      assert.equal((await client.post('/api/purge', body, { 'X-BQ-CSRF': stranger.csrf })).status, 403, "another session's token");
      assert.equal((await client.post('/api/purge', body, { Origin: 'http://evil.example' })).status, 403);
      assert.equal((await client.post('/api/purge', body, { 'Sec-Fetch-Site': 'cross-site' })).status, 403);
      assert.equal((await client.json('POST', '/api/purge', JSON.stringify(body), { 'Content-Type': 'text/plain', 'X-BQ-CSRF': client.csrf })).status, 415);
      assert.equal(transport.messages('orders.dlq').length, 1, 'nothing purged');
    });

    it('no API read answers another site (an <img> tag, a form): reads need the CSRF token and a same-site request, and nothing is scanned', async () => {
      const counting = new InMemoryTransport();
      await counting.publishRaw('orders.dlq', foreignRecord({ urn: 'urn:babel:t:x', queue: 'orders', lang: 'php', dlLang: 'php' }));
      let scans = 0;
      const scan = counting.scan.bind(counting);
      counting.scan = (queue, options) => {
        scans += 1;
        return scan(queue, options);
      };
      const { running: server } = await consoleOn(counting);
      try {
        const page = new ConsoleClient(server.url);
        await page.open();
        const before = scans;
        const paths = ['/api/stats?dlq=orders.dlq', '/api/records?dlq=orders.dlq', `/api/record?dlq=orders.dlq&index=0&hash=${'0'.repeat(16)}`, '/api/history?dlq=orders.dlq'];
        for (const path of paths) {
          // What an <img src> on another origin sends: no CSRF header (and with SameSite=Strict, no cookie either).
          assert.equal((await new ConsoleClient(server.url).request('GET', path, undefined, { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Dest': 'image' })).status, 403, `${path} cross-site`);
          assert.equal((await new ConsoleClient(server.url).request('GET', path)).status, 403, `${path} without a session or token`);
          assert.equal((await page.request('GET', path, undefined, { 'X-BQ-CSRF': 'forged' })).status, 403, `${path} with a forged token`);
          assert.equal((await page.request('GET', path, undefined, { 'Sec-Fetch-Site': 'same-site' })).status, 403, `${path} from a sibling site`);
          assert.equal((await page.request('GET', path, undefined, { Origin: 'http://evil.example' })).status, 403, `${path} from another origin`);
        }
        assert.equal(scans, before, 'no refused request read the DLQ');
        assert.equal((await new ConsoleClient(server.url).request('GET', '/api/session', undefined, { 'Sec-Fetch-Site': 'cross-site' })).status, 403);
        const own = await page.get('/api/stats', { dlq: 'orders.dlq' });
        assert.equal(own.status, 200, 'the page itself reads with its token');
        assert.equal(own.body.matched, 1);
      } finally {
        await server.close();
      }
    });

    it('on loopback it answers only to loopback host names (DNS rebinding)', async () => {
      const status = await new Promise<number>((resolve, reject) => {
        const url = new URL('/api/session', running.url);
        request({ host: url.hostname, port: url.port, path: url.pathname, headers: { Host: 'attacker.example' } }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        }).on('error', reject).end();
      });
      assert.equal(status, 421);
      const local = new ConsoleClient(running.url.replace('127.0.0.1', 'localhost'));
      assert.equal((await local.request('GET', '/api/session')).status, 200);
    });
  });

  describe('authentication', () => {
    it('token: 401 without it, a session cookie from /?token=…, Bearer for scripts', async () => {
      const token = 'a-long-console-token-1234';
      const transport = new InMemoryTransport();
      await transport.publishRaw('orders.dlq', foreignRecord({ urn: 'urn:babel:t:x', queue: 'orders', lang: 'php', dlLang: 'php' }));
      const { running } = await consoleOn(transport, { token });
      try {
        const anonymous = new ConsoleClient(running.url);
        assert.equal((await anonymous.request('GET', '/')).status, 401);
        assert.equal((await anonymous.request('GET', '/api/records?dlq=orders.dlq')).status, 401);
        assert.equal((await anonymous.request('GET', '/?token=wrong-token-wrong-token')).status, 401);
        const browser = new ConsoleClient(running.url);
        const login = await browser.request('GET', `/?token=${token}`);
        assert.equal(login.status, 303);
        assert.equal(login.headers.get('location'), '/', 'the token leaves the address bar');
        await browser.open();
        assert.equal((await browser.get('/api/records', { dlq: 'orders.dlq' })).status, 200);
        const script = new ConsoleClient(running.url, { Authorization: `Bearer ${token}` });
        const purged = await script.json('POST', '/api/purge', JSON.stringify({ dlq: 'orders.dlq', confirm: 'orders.dlq' }), { 'Content-Type': 'application/json' });
        assert.equal(purged.status, 200, 'a Bearer request carries no ambient credential: no CSRF token needed');
      } finally {
        await running.close();
      }
    });

    it('basic auth: the browser is asked, the right pair passes', async () => {
      const { running } = await consoleOn(new InMemoryTransport(), { basicAuth: { username: 'ops', password: 'pa:ss' } });
      try {
        const denied = await new ConsoleClient(running.url).request('GET', '/');
        assert.equal(denied.status, 401);
        assert.match(denied.headers.get('www-authenticate') ?? '', /^Basic /);
        const wrong = new ConsoleClient(running.url, { Authorization: `Basic ${Buffer.from('ops:nope').toString('base64')}` });
        assert.equal((await wrong.request('GET', '/')).status, 401);
        const right = new ConsoleClient(running.url, { Authorization: `Basic ${Buffer.from('ops:pa:ss').toString('base64')}` });
        assert.equal((await right.request('GET', '/')).status, 200);
      } finally {
        await running.close();
      }
    });

    it('refuses to listen beyond loopback without authentication, before it listens', async () => {
      await assert.rejects(startConsole({ transport: new InMemoryTransport(), host: '0.0.0.0', port: 0 }), (error: unknown) => {
        assert.ok(error instanceof ConfigurationError, 'a ConfigurationError');
        assert.match(error.message, /needs authentication/);
        return true;
      });
      await assert.rejects(startConsole({ transport: new InMemoryTransport(), token: 'short' }), /at least 16 characters/);
    });
  });

  it('100,000 records: any page is one window, and a search streams them all keeping only its matches', async () => {
    const transport = new InMemoryTransport();
    const record = foreignRecord({ urn: 'urn:babel:t:x', queue: 'orders', lang: 'php', dlLang: 'php', error: 'ordinary' });
    for (let i = 0; i < 99_999; i++) transport.broker.push('orders.dlq', { body: record, headers: {}, key: null, redeliveries: 0 });
    await transport.publishRaw('orders.dlq', foreignRecord({ urn: 'urn:babel:t:x', queue: 'orders', lang: 'php', dlLang: 'php', error: 'the needle' }));
    // A budget no test run reaches: this test reads 100,000 records in one request (scale.test.ts covers answering early).
    const { running, client } = await consoleOn(transport, { scanLimit: 100_000, scanBudgetMs: 600_000 });
    try {
      await client.open();
      const tail = await client.get('/api/records', { dlq: 'orders.dlq', from: 99_990, limit: 50 });
      assert.deepEqual([tail.body.records.length, tail.body.scanned, tail.body.depth], [10, 10, 100_000]);
      const found = await client.get('/api/records', { dlq: 'orders.dlq', q: 'needle' });
      assert.deepEqual(found.body.records.map((r: any) => r.index), [99_999]);
      assert.deepEqual([found.body.scanned, found.body.complete], [100_000, true]);
      const limited = await startConsole({ transport, dlqs: ['orders.dlq'], port: 0, scanLimit: 1000, scanBudgetMs: 600_000, logger: captureLogger() });
      try {
        const capped = new ConsoleClient(limited.url);
        await capped.open();
        const partial = await capped.get('/api/records', { dlq: 'orders.dlq', q: 'needle' });
        assert.deepEqual([partial.body.records.length, partial.body.scanned, partial.body.limited, partial.body.stopped, partial.body.next], [0, 1000, true, 'scan-limit', 1000]);
      } finally {
        await limited.close();
      }
    } finally {
      await running.close();
    }
  });
});
