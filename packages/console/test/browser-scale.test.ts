import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InMemoryTransport, silentLogger, type ScannedRecord, type ScanOptions } from '@babelqueue/core';
import type { Page } from 'playwright-core';
import { until } from '../../../test/support/until.js';
import { startConsole, type RunningConsole } from '../src/index.js';
import { ARTIFACTS, browserSuite, launch } from './support/browser.js';
import { foreignRecord } from './support/records.js';

const chromium = browserSuite();
const rows = (page: Page) => page.locator('[data-testid=record-row]');
const text = async (page: Page, testid: string) => page.locator(`[data-testid=${testid}]`).innerText();

/**
 * A DLQ that reads slowly (2 ms a record), so a search over 1,500 records
 * takes seconds and the page has to carry on across many answers of a 100 ms
 * budget: what a big DLQ looks like to the page.
 */
class SlowScan extends InMemoryTransport {
  override async *scan(queue: string, options: ScanOptions = {}): AsyncGenerator<ScannedRecord> {
    for await (const record of super.scan(queue, options)) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      yield record;
    }
  }
}

describe('a big DLQ in headless Chromium: the page carries a search, the charts and open-by-link on across answers of a time budget', { skip: chromium.skip }, () => {
  const dlq = 'orders.dlq';
  const transport = new SlowScan();
  let server: RunningConsole;
  let browser: Awaited<ReturnType<typeof launch>>;
  let page: Page;

  before(async () => {
    for (let i = 0; i < 1500; i++) {
      await transport.publishRaw(dlq, foreignRecord({
        urn: 'urn:babel:orders:created', queue: 'orders', lang: 'node', dlLang: 'node', id: `m-${i}`,
        data: { customer: i === 1_300 ? 'Zoë Quartermaine' : `customer ${i}` }, error: `order ${i} not found`, exception: 'NotFound',
      }));
    }
    server = await startConsole({ transport, dlqs: [dlq], port: 0, logger: silentLogger, scanBudgetMs: 100, sampleEveryMs: 3_600_000, journalDir: mkdtempSync(join(tmpdir(), 'bq-console-journal-')) });
    browser = await launch();
    page = await browser.context.newPage();
    page.setDefaultTimeout(30_000);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('counts the charts step by step to the whole DLQ, and a search shows progress, stops when asked, and keeps searching to the record', async () => {
    await page.goto(server.url);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
    await until(async () => /Charts count 1,500 of 1,500 records;/.test(await text(page, 'stats-line')), 60_000, 'the charts to count every record');
    assert.ok(await page.locator('[data-testid=charts-more]').isHidden(), 'no Stop counting once complete');
    assert.match(await page.locator('[data-testid=groups-line]').innerText(), /1 group among 1,500 record/);

    // The page's record requests (the charts count on beside them, in requests of their own).
    let asked = 0;
    let answered = 0;
    const isPageRead = (url: string) => url.includes('/api/records?');
    page.on('request', (request) => void (isPageRead(request.url()) && (asked += 1)));
    page.on('requestfinished', (request) => void (isPageRead(request.url()) && (answered += 1)));
    await page.fill('[data-testid=filter-find]', 'quartermaine');
    await page.click('[data-testid=apply]');
    // The unfiltered page may still say "searching on…" until the search's first answer is in.
    const searching = /no rows · scanned [\d,]+ of 1,500 records \(answered at the time budget of 100 ms per request; searching on…\)/;
    await until(async () => searching.test(await text(page, 'page-line')), 30_000, 'the page to say the search scans on');
    await page.screenshot({ path: join(ARTIFACTS, 'scale-1-searching.png') });
    await page.click('[data-testid=scan-more]');
    assert.equal(await text(page, 'scan-more'), 'Keep searching');
    // Once the answer in flight is in, no further request starts.
    await until(async () => asked === answered && /then by you/.test(await text(page, 'page-line')), 30_000, 'the search to stop');
    const stoppedAt = await text(page, 'page-line');
    const before = asked;
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(asked, before, 'a stopped search asks for nothing more');
    assert.equal(await text(page, 'page-line'), stoppedAt);
    assert.equal(await rows(page).count(), 0);

    await page.click('[data-testid=scan-more]');
    await until(async () => (await rows(page).count()) === 1 && /scanned 1,500 of 1,500 records$/.test(await text(page, 'page-line')), 60_000, 'the search to reach the record and the end');
    assert.match(await rows(page).first().innerText(), /^\s*1301\b/);
    assert.ok(await page.locator('[data-testid=scan-more]').isHidden(), 'nothing left to search');
    await page.screenshot({ path: join(ARTIFACTS, 'scale-2-found.png') });
  });

  it('a link to a deep record looks for it across answers, saying how far it got, and opens it', async () => {
    const fresh = await browser.context.newPage();
    try {
      await fresh.goto(`${server.url}#/record/m-1400?dlq=${dlq}`);
      await fresh.waitForSelector('[data-testid=find-progress]', { timeout: 30_000 });
      assert.match(await fresh.locator('[data-testid=find-progress]').innerText(), /Looking for it… scanned [\d,]+ of 1,500 records/);
      await fresh.waitForSelector('[data-testid=envelope]', { timeout: 60_000 });
      assert.match(await fresh.locator('#detail-title').innerText(), /Record #1401/);
    } finally {
      await fresh.close();
    }
  });
});
