import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
const URN = 'urn:babel:orders:created';
const STACK = 'TypeError: card declined\n    at charge (/srv/app/billing.js:42:11)\n    at <XSS> (node:internal)';

const rows = (page: Page) => page.locator('[data-testid=record-row]');

describe('the console in headless Chromium: edit and redrive, the record panel, targets, audit, read-only', { skip: redis.skip || chromium.skip }, () => {
  const queue = uniqueQueue('console-ops');
  const dlq = `${queue}.dlq`;
  const elsewhere = `${queue}-elsewhere`;
  let transport: RedisTransport;
  let server: RunningConsole;
  let readOnly: RunningConsole;
  let browser: Awaited<ReturnType<typeof launch>>;
  let page: Page;

  before(async () => {
    transport = new RedisTransport({ url: redis.url!, logger: silentLogger });
    const stacked = JSON.parse(foreignRecord({ urn: URN, queue, lang: 'node', dlLang: 'node', id: 'with-stack', data: { order_id: 1 } }).toString());
    stacked.dead_letter.stack = STACK;
    await transport.publishRaw(dlq, Buffer.from(JSON.stringify(stacked)));
    await transport.publishRaw(dlq, foreignRecord({ urn: URN, queue, lang: 'php', dlLang: 'php', id: 'to-edit', data: { order_id: 2, email: 'bad@@example' } }));
    await transport.publishRaw(dlq, foreignRecord({ urn: URN, queue, lang: 'go', dlLang: 'go', id: 'to-elsewhere', data: { order_id: 3 } }));
    const journalDir = mkdtempSync(join(tmpdir(), 'bq-console-journal-'));
    server = await startConsole({ transport, queues: [queue], port: 0, logger: silentLogger, journalDir, auditLog: join(journalDir, 'audit.jsonl') });
    readOnly = await startConsole({ transport, queues: [queue], port: 0, logger: silentLogger, journalDir, readOnly: true });
    browser = await launch();
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('dialog', (dialog) => void dialog.dismiss());
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await readOnly?.close();
    for (const q of [queue, dlq, elsewhere]) await transport?.purge(q).catch(() => undefined);
    await transport?.close();
  });

  const open = async (url: string, count: number) => {
    await page.goto(url);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
    await until(async () => (await rows(page).count()) === count, 10_000, `${count} rows`);
  };
  const openRecord = async (id: string) => {
    await rows(page).filter({ has: page.locator(`td[title="meta.id ${id}"]`) }).click();
    await page.waitForSelector('[data-testid=envelope]');
  };

  it('read-only: no action buttons, no check boxes, no record actions', async () => {
    await open(readOnly.url, 3);
    for (const id of ['redrive-selected', 'redrive-matching', 'delete-selected', 'purge', 'to-queue', 'select-all']) {
      assert.equal(await page.locator(`[data-testid=${id}]`).isVisible(), false, `${id} is hidden`);
    }
    assert.equal(await rows(page).first().locator('input[type=checkbox]').isVisible(), false);
    await openRecord('to-edit');
    assert.equal(await page.locator('[data-testid=detail-redrive], [data-testid=detail-delete], [data-testid=detail-edit]').count(), 0);
    await page.screenshot({ path: join(ARTIFACTS, 'ops-1-read-only.png') });
  });

  it('shows a record\'s stack trace in its panel, as text', async () => {
    await open(server.url, 3);
    await openRecord('with-stack');
    assert.equal(await page.locator('[data-testid=stack]').textContent(), STACK);
    assert.equal(await page.locator('#detail xss').count(), 0);
    await page.click('[data-testid=detail-close]');
  });

  it('asks for no typed name where none is needed', async () => {
    await openRecord('with-stack');
    await page.click('[data-testid=detail-delete]');
    await page.waitForSelector('[data-testid=confirm][open]');
    assert.equal(await page.locator('[data-testid=confirm-input]').isVisible(), false, 'no "Type … to confirm" box for a delete');
    await page.click('[data-testid=confirm-cancel]');
    await page.click('[data-testid=detail-close]');
    await page.click('[data-testid=purge]');
    await page.waitForSelector('[data-testid=confirm][open]');
    assert.equal(await page.locator('[data-testid=confirm-input]').isVisible(), true, 'the purge asks for the name');
    await page.click('[data-testid=confirm-cancel]');
  });

  it('edits a record\'s data and redrives the copy: a bad edit changes nothing, a good one replaces the original', async () => {
    await openRecord('to-edit');
    await page.click('[data-testid=detail-edit]');
    await page.fill('[data-testid=edit-data]', '[1, 2]');
    await page.click('[data-testid=edit-send]');
    await page.waitForSelector('[data-testid=confirm][open]');
    await page.click('[data-testid=confirm-ok]');
    await until(async () => /must be a JSON object/.test(await page.locator('[data-testid=edit-error]').innerText()), 10_000, 'the refusal');
    assert.equal(await transport.depth(dlq), 3, 'nothing left the DLQ');
    await page.fill('[data-testid=edit-data]', '{"order_id": 2, "email": "good@example.com"}');
    await page.screenshot({ path: join(ARTIFACTS, 'ops-2-edit.png') });
    await page.click('[data-testid=edit-send]');
    await page.waitForSelector('[data-testid=confirm][open]');
    await page.click('[data-testid=confirm-ok]');
    await until(async () => /edit and redrive: 1 redriven/.test(await page.locator('[data-testid=toast]').innerText()), 10_000, 'the edit toast');
    await until(async () => (await rows(page).count()) === 2, 10_000, 'two rows left');
    const [sent] = await transport.browse(queue, 10);
    const copy = JSON.parse(sent!.toString());
    assert.deepEqual(copy.data, { order_id: 2, email: 'good@example.com' });
    assert.equal(copy.meta.id, 'to-edit');
    assert.equal(copy.attempts, 0);
    assert.equal(copy.dead_letter, undefined);
  });

  it('redrives from the record panel to a new queue after asking, and refuses the DLQ itself', async () => {
    await page.fill('[data-testid=to-queue]', dlq);
    await openRecord('to-elsewhere');
    await page.click('[data-testid=detail-redrive]');
    await page.waitForSelector('[data-testid=confirm][open]');
    await page.click('[data-testid=confirm-ok]');
    await until(async () => /dead-letter queue/.test(await page.locator('[data-testid=toast]').innerText()), 10_000, 'the refusal');
    assert.equal(await transport.depth(dlq), 2);
    await page.fill('[data-testid=to-queue]', elsewhere);
    await openRecord('to-elsewhere');
    await page.click('[data-testid=detail-redrive]');
    await page.waitForSelector('[data-testid=confirm][open]');
    await page.click('[data-testid=confirm-ok]');
    await until(async () => /Send to/.test(await page.locator('#confirm-title').innerText()), 10_000, 'the question about the new queue');
    await page.screenshot({ path: join(ARTIFACTS, 'ops-3-new-queue.png') });
    await page.click('[data-testid=confirm-ok]');
    await until(async () => /redrive: 1 redriven/.test(await page.locator('[data-testid=toast]').innerText()), 10_000, 'the redrive toast');
    assert.equal(await transport.depth(elsewhere), 1);
  });

  it('shows the audit trail on its own page', async () => {
    await page.click('[data-testid=audit-toggle]');
    await until(async () => (await page.locator('[data-testid=audit-row]').count()) === 2, 10_000, 'two audit rows');
    const text = await page.locator('[data-testid=audit-table]').innerText();
    assert.match(text, /redrive/);
    assert.match(text, /edit/);
    assert.match(text, new RegExp(elsewhere));
    assert.match(text, /127\.0\.0\.1/);
    assert.match(await page.locator('[data-testid=audit-line]').innerText(), /audit log file/);
    assert.equal(await page.locator('[data-testid=records]').isVisible(), false);
    await page.screenshot({ path: join(ARTIFACTS, 'ops-4-audit.png') });
    await page.click('[data-testid=audit-toggle]');
    assert.equal(await page.locator('[data-testid=records]').isVisible(), true);
  });
});
