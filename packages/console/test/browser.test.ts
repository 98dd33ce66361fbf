import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createApp, silentLogger, type App } from '@babelqueue/core';
import { RedisTransport } from '@babelqueue/redis';
import type { Page } from 'playwright-core';
import { broker, uniqueQueue } from '../../../test/support/brokers.js';
import { startConsole, type RunningConsole } from '../src/index.js';
import { ARTIFACTS, browserSuite, launch } from './support/browser.js';
import { foreignRecord, poison, XSS } from './support/records.js';

const redis = broker('redis');
const chromium = browserSuite();
const URN = 'urn:babel:orders:created';

/** Polls `check` every 50 ms until it holds, or fails after `ms`. */
async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const rows = (page: Page) => page.locator('[data-testid=record-row]');

describe('the console in headless Chromium, over Redis, with a running App', { skip: redis.skip || chromium.skip }, () => {
  const queue = uniqueQueue('console-e2e');
  const dlq = `${queue}.dlq`;
  const handled: { id: string; attempts: number; replay: boolean }[] = [];
  let failing = true;
  let appTransport: RedisTransport;
  let consoleTransport: RedisTransport;
  let app: App;
  const stopApp = new AbortController();
  let running: Promise<void>;
  let server: RunningConsole;
  let browser: Awaited<ReturnType<typeof launch>>;
  let page: Page;
  const failedIds: string[] = [];

  before(async () => {
    appTransport = new RedisTransport({ url: redis.url!, logger: silentLogger });
    consoleTransport = new RedisTransport({ url: redis.url!, logger: silentLogger });
    app = createApp({ transport: appTransport, queue, maxAttempts: 1, deadLetter: true, logger: silentLogger });
    app.handle(URN, async (_data, message) => {
      if (failing) throw new Error('payment gateway timeout after 30s');
      handled.push({ id: message.id, attempts: message.attempts, replay: message.headers['bq-replay-bypass'] === '1' });
    });
    running = app.run({ concurrency: 2, signal: stopApp.signal });
    for (let i = 0; i < 3; i++) failedIds.push(await app.publish(URN, { order_id: 1000 + i }));
    // The App dead-letters them asynchronously: wait, so the foreign records come after them (rows are in queue order).
    await until(async () => (await consoleTransport.depth(dlq)) === 3, 20_000, 'the three failed orders on the DLQ');
    await consoleTransport.publishRaw(dlq, foreignRecord({ urn: 'urn:babel:mail:send', queue, lang: 'go', dlLang: 'python', reason: 'unknown_urn', error: 'no handler for this URN', exception: null }));
    await consoleTransport.publishRaw(dlq, poison(Buffer.from([0xff, 0x0e, 0x41]), queue));
    await consoleTransport.publishRaw(dlq, poison(XSS, queue, 'body is not a JSON object'));
    await consoleTransport.publishRaw(dlq, foreignRecord({ urn: URN, queue, lang: 'php', dlLang: 'php', error: XSS, exception: XSS, data: { note: XSS } }));
    await until(async () => (await consoleTransport.depth(dlq)) === 7, 20_000, 'three dead-lettered orders and four foreign records');
    server = await startConsole({ transport: consoleTransport, queues: [queue], port: 0, logger: silentLogger, sampleEveryMs: 500 });
    browser = await launch();
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('dialog', (dialog) => void dialog.dismiss()); // an alert() would mean injected script ran
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    stopApp.abort();
    await running?.catch(() => undefined);
    await consoleTransport?.purge(queue).catch(() => undefined);
    await consoleTransport?.purge(dlq).catch(() => undefined);
    await consoleTransport?.close();
  });

  it('opens the page: records from every language, counts, charts', async () => {
    await page.goto(server.url);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
    await until(async () => (await rows(page).count()) === 7, 10_000, 'seven rows');
    assert.match(await page.locator('[data-testid=page-line]').innerText(), /scanned 7 of 7 records/);
    assert.match(await page.locator('[data-testid=broker]').innerText(), /redis-legacy · redis:\/\/127\.0\.0\.1/);
    assert.match(await page.locator('[data-testid=chart-reason] svg').getAttribute('aria-label') ?? '', /failed: 4/);
    assert.equal(await page.locator('[data-testid=chart-urn] svg').count(), 1);
    await page.screenshot({ path: join(ARTIFACTS, '1-overview.png') });
  });

  it('filters by producing language and by reason', async () => {
    await page.fill('[data-testid=filter-lang]', 'go');
    await page.click('[data-testid=apply]');
    await until(async () => (await rows(page).count()) === 1, 10_000, 'one Go record');
    assert.match(await rows(page).first().innerText(), /urn:babel:mail:send/);
    await page.click('[data-testid=reset]');
    await page.selectOption('[data-testid=filter-reason]', 'poison');
    await page.click('[data-testid=apply]');
    await until(async () => (await rows(page).count()) === 2, 10_000, 'two poison records');
    await page.screenshot({ path: join(ARTIFACTS, '2-filtered.png') });
  });

  it('inspects a poison record and the XSS probe: markup shows as text and never runs', async () => {
    await rows(page).nth(1).click();
    await page.waitForSelector('[data-testid=poison-raw]');
    assert.equal(await page.locator('[data-testid=poison-raw]').textContent(), XSS);
    await page.screenshot({ path: join(ARTIFACTS, '3-poison.png') });
    await page.click('[data-testid=detail-close]');
    await rows(page).nth(0).click();
    await until(async () => (await page.locator('[data-testid=poison-raw]').textContent()) === 'ff 0e 41', 10_000, 'the binary poison record as hex');
    await page.click('[data-testid=detail-close]');
    await page.click('[data-testid=reset]');
    await until(async () => (await rows(page).count()) === 7, 10_000, 'all rows again');
    await rows(page).nth(6).click();
    await page.waitForSelector('[data-testid=envelope]');
    assert.match(await page.locator('[data-testid=envelope]').innerText(), /<img src=x onerror=/);
    assert.equal(await page.evaluate(() => (globalThis as { __xss?: unknown }).__xss), undefined, 'no injected script ran');
    assert.equal(await page.locator('#rows img, #rows script, #rows b, #detail img, #detail script, #detail b').count(), 0, 'no markup became elements');
    await page.screenshot({ path: join(ARTIFACTS, '4-xss-inert.png') });
    await page.click('[data-testid=detail-close]');
  });

  it('redrives one message and a running App handles it', async () => {
    failing = false;
    const target = failedIds[1]!;
    await page.fill('[data-testid=filter-q]', 'gateway timeout');
    await page.click('[data-testid=apply]');
    await until(async () => (await rows(page).count()) === 3, 10_000, 'the three failed orders');
    const row = rows(page).filter({ has: page.locator(`td[title="meta.id ${target}"]`) });
    await row.locator('input[type=checkbox]').check();
    assert.match(await page.locator('[data-testid=selection]').innerText(), /1 selected/);
    await page.check('[data-testid=bypass]');
    await page.click('[data-testid=redrive-selected]');
    await page.waitForSelector('[data-testid=confirm][open]');
    assert.match(await page.locator('#confirm-text').innerText(), /marked as replays/);
    await page.click('[data-testid=confirm-ok]');
    await until(async () => /redrive: 1 redriven/.test(await page.locator('[data-testid=toast]').innerText()), 10_000, 'the redrive toast');
    await until(() => handled.some((h) => h.id === target), 20_000, 'the App to handle the redriven message');
    assert.deepEqual(handled, [{ id: target, attempts: 1, replay: true }], 'handled once, attempts reset (0 in the body, this is attempt 1), as a replay');
    await until(async () => (await rows(page).count()) === 2, 10_000, 'two failed orders left');
    await page.screenshot({ path: join(ARTIFACTS, '5-redriven.png') });
  });

  it('purges after typing the DLQ name', async () => {
    await page.click('[data-testid=reset]');
    await until(async () => (await rows(page).count()) === 6, 10_000, 'six rows');
    await page.click('[data-testid=purge]');
    await page.waitForSelector('[data-testid=confirm][open]');
    assert.equal(await page.locator('[data-testid=confirm-ok]').isDisabled(), true, 'not before the name is typed');
    await page.fill('[data-testid=confirm-input]', dlq);
    await page.click('[data-testid=confirm-ok]');
    await until(async () => /purge: 6 deleted/.test(await page.locator('[data-testid=toast]').innerText()), 10_000, 'the purge toast');
    await until(async () => (await rows(page).count()) === 0, 10_000, 'an empty table');
    assert.equal(await consoleTransport.depth(dlq), 0);
    assert.equal(await page.evaluate(() => (globalThis as { __xss?: unknown }).__xss), undefined);
    await page.screenshot({ path: join(ARTIFACTS, '6-purged.png') });
  });
});
