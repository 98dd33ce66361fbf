import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '@babelqueue/core';
import { RedisTransport } from '@babelqueue/redis';
import type { Page } from 'playwright-core';
import { broker, uniqueQueue } from '../../../test/support/brokers.js';
import { until } from '../../../test/support/until.js';
import { startConsole, type RunningConsole } from '../src/index.js';
import { ARTIFACTS, browserSuite, launch } from './support/browser.js';
import { foreignRecord } from './support/records.js';

const redis = broker('redis');
const chromium = browserSuite();
const rows = (page: Page) => page.locator('[data-testid=record-row]');
const groupRows = (page: Page) => page.locator('[data-testid=group-row]');

describe('finding records and fixing a failure group in headless Chromium, over Redis', { skip: redis.skip || chromium.skip }, () => {
  const queue = uniqueQueue('console-find');
  const dlq = `${queue}.dlq`;
  const needleId = 'order-needle-6b1f';
  let transport: RedisTransport;
  let server: RunningConsole;
  let browser: Awaited<ReturnType<typeof launch>>;
  let page: Page;

  before(async () => {
    transport = new RedisTransport({ url: redis.url!, logger: silentLogger });
    // 2,000 records in three failure groups; the one to find sits at position 1,590.
    const bodies: Buffer[] = [];
    for (let i = 0; i < 2000; i++) {
      const kind = i % 4 === 0 ? 'stock' : i % 4 === 1 ? 'gateway' : 'missing';
      bodies.push(foreignRecord({
        urn: 'urn:babel:orders:created', queue, lang: i % 2 === 0 ? 'python' : 'node', dlLang: 'node',
        ...(i === 1589 ? { id: needleId } : {}),
        data: { customer: i === 1589 ? 'Zoë Quartermaine' : `customer ${i}`, i },
        error: kind === 'stock' ? `stock ${i} reserved twice` : kind === 'gateway' ? `gateway timeout after ${i % 30}s` : `order ${i} not found`,
        exception: kind === 'gateway' ? 'TimeoutError' : 'NotFound',
      }));
    }
    await transport.client.rpush(dlq, ...bodies);
    server = await startConsole({ transport, queues: [queue], port: 0, logger: silentLogger, sampleEveryMs: 1000 });
    browser = await launch();
    page = await browser.context.newPage();
    page.setDefaultTimeout(20_000);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await transport?.purge(queue).catch(() => undefined);
    await transport?.purge(dlq).catch(() => undefined);
    await transport?.close();
  });

  it('finds the record at position 1,590 by a word of its data, and its link opens it directly', async () => {
    await page.goto(server.url);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
    await page.fill('[data-testid=filter-find]', 'quartermaine');
    await page.click('[data-testid=apply]');
    await until(async () => (await rows(page).count()) === 1 && /scanned 2,000 of 2,000/.test(await page.locator('[data-testid=page-line]').innerText()), 20_000, 'one row found among 2,000');
    assert.match(await rows(page).first().innerText(), /^\s*1590\b/);
    await rows(page).first().click();
    await page.waitForSelector('[data-testid=envelope]');
    assert.match(await page.locator('[data-testid=envelope]').innerText(), /Zoë Quartermaine/);
    const link = await page.locator('[data-testid=detail-link]').innerText();
    assert.match(link, new RegExp(`#/record/${needleId}\\?dlq=`));
    await page.screenshot({ path: join(ARTIFACTS, 'find-1-search.png') });
    const fresh = await browser.context.newPage();
    try {
      await fresh.goto(link);
      await fresh.waitForSelector('[data-testid=envelope]', { timeout: 30_000 });
      assert.match(await fresh.locator('[data-testid=envelope]').innerText(), /Zoë Quartermaine/);
      assert.match(await fresh.locator('#detail-title').innerText(), /Record #1590/);
    } finally {
      await fresh.close();
    }
  });

  it('shows failure groups, filters by one on click (charts follow), and redrives the group with a result line', async () => {
    await page.click('[data-testid=detail-close]');
    await page.click('[data-testid=reset]');
    await until(async () => (await groupRows(page).count()) === 3, 20_000, 'three failure groups');
    const stock = groupRows(page).filter({ hasText: 'stock <n> reserved twice' });
    assert.match(await stock.innerText(), /^\s*500\b/);
    assert.match(await stock.innerText(), /python 500/, 'languages from the envelope');
    await stock.locator('[data-testid=group-filter]').click();
    await until(async () => /500 record/.test(await page.locator('[data-testid=groups-line]').innerText()), 20_000, 'the groups line to follow the filter');
    assert.equal(await groupRows(page).count(), 1);
    assert.match(await page.locator('[data-testid=group-chip]').innerText(), /stock <n> reserved twice/);
    assert.match(await page.locator('[data-testid=chart-reason] svg').getAttribute('aria-label') ?? '', /failed: 500/, 'the charts follow the group filter');
    assert.match(await page.locator('[data-testid=chart-failed-at] svg').getAttribute('aria-label') ?? '', /^500 failures/);
    assert.match(await rows(page).first().innerText(), /stock 0 reserved twice/);
    await page.screenshot({ path: join(ARTIFACTS, 'find-2-group.png') });

    await groupRows(page).first().locator('[data-testid=group-redrive]').click();
    await page.waitForSelector('[data-testid=confirm][open]');
    assert.match(await page.locator('#confirm-title').innerText(), /Redrive this group \(500\)/);
    await page.click('[data-testid=confirm-ok]');
    await until(async () => await page.locator('[data-testid=group-result]').isVisible(), 60_000, 'the result line');
    assert.match(await page.locator('[data-testid=group-result]').innerText(), /Redrove the group .*stock <n> reserved twice: 500 redriven in/);
    const moved = await transport.browse(queue, 1000);
    assert.equal(moved.length, 500);
    assert.ok(moved.every((body) => JSON.parse(body.toString()).data.i % 4 === 0), 'exactly the group was redriven');
    assert.equal(await transport.depth(dlq), 1500);
    await until(async () => (await groupRows(page).count()) === 2, 20_000, 'two groups left');
    await page.screenshot({ path: join(ARTIFACTS, 'find-3-group-redriven.png') });
  });
});
