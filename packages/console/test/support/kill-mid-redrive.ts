import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { dlqName, silentLogger, type Transport } from '@babelqueue/core';
import { broker, uniqueQueue } from '../../../../test/support/brokers.js';
import { until } from '../../../../test/support/until.js';
import { startConsole } from '../../src/index.js';
import { ConsoleClient } from './client.js';
import { foreignRecord } from './records.js';
import { BROKERS } from './targets.js';

/** Records the killed redrive works on: enough that a kill lands mid-way. */
const RECORDS = 200;

/** The `meta.id` of every record of `queue`, by the binding's own scan. */
async function idsOn(transport: Transport, queue: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const record of transport.scan!(queue)) ids.push((JSON.parse(record.body.toString()) as { meta: { id: string } }).meta.id);
  return ids;
}

/**
 * The kill-mid-redrive test on the targets named: a console in a child
 * process starts a redrive of {@link RECORDS} records and is killed with
 * SIGKILL once copies reach the work queue (polled, never a timed sleep).
 */
export function killMidRedrive(names: readonly string[]): void {
for (const target of BROKERS.filter((t) => names.includes(t.name))) {
  const suite = broker(target.suite);
  describe(`a console killed mid-redrive on ${target.name}`, { skip: suite.skip }, () => {
    it('SIGKILL while a redrive of a few hundred records runs: the next console shows the interrupted action, finishes it, and every record is on exactly one side', async () => {
      const group = uniqueQueue('kill-group');
      const transport = await target.make(suite.url!, group);
      const queue = uniqueQueue('console-kill');
      const dlq = transport.rules.dlqName ? transport.rules.dlqName(queue, undefined) : dlqName(queue);
      await target.prepare?.(suite.url!, queue, dlq);
      await transport.connect({ timeoutMs: 10_000 });
      const journalDir = mkdtempSync(join(tmpdir(), 'bq-console-journal-'));
      const ids = Array.from({ length: RECORDS }, (_, i) => `kill-${i}`);
      for (const id of ids) await transport.publishRaw!(dlq, foreignRecord({ id, urn: 'urn:babel:t:x', queue, lang: 'php', dlLang: 'php' }));

      const child = spawn(process.execPath, [
        '--conditions=source', '--import', 'tsx',
        join(import.meta.dirname, 'redrive-child.ts'), target.name, suite.url!, dlq, journalDir, group,
      ], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      let exitCode: number | null | undefined;
      const exited = new Promise((resolve) => child.on('exit', (code) => resolve((exitCode = code))));
      let running: Awaited<ReturnType<typeof startConsole>> | undefined;
      try {
        try {
          await until(() => out.includes('listening ') || exitCode !== undefined, 90_000, 'the child console to listen');
          assert.equal(exitCode, undefined, 'the child exited before it listened');
          const page = new ConsoleClient(/listening (\S+)/.exec(out)![1]!);
          await page.open();
          // The answer never comes: the child dies first.
          void page.post('/api/redrive', { dlq, matching: 'all' }).catch(() => undefined);
          // Kill once some copies reached the work queue, not after a guessed time.
          await until(async () => (await transport.depth!(queue)) > 0, 120_000, 'the redrive to start writing', 50);
        } finally {
          child.kill('SIGKILL');
        }
        await exited;

        running = await startConsole({ transport, dlqs: [dlq], port: 0, logger: silentLogger, idleMs: 2000, sampleEveryMs: 600_000, journalDir });
        const client = new ConsoleClient(running.url);
        const session = await client.open();
        assert.equal(session.interrupted.length, 1, `the next start shows the interrupted redrive: ${JSON.stringify(session.interrupted)}`);
        assert.equal(session.interrupted[0].action, 'redrive');
        // Records the dead child held come back when the broker notices (a closed connection, a lapsed lock or lease).
        let sides = { dlq: [] as string[], work: [] as string[] };
        let lastRecover = '';
        const exactlyOnce = async () => {
          const recovered = await client.post('/api/recover', { dlq });
          // 503/502: records of the dead process not back or not takeable yet; the journal stays and the next call tries again.
          if (recovered.status !== 200 && !(recovered.status === 400 && /no interrupted action/.test(recovered.body.error))) {
            lastRecover = `${recovered.status} ${JSON.stringify(recovered.body)}`;
            return false;
          }
          sides = { dlq: await idsOn(transport, dlq), work: await idsOn(transport, queue) };
          const all = [...sides.dlq, ...sides.work].sort();
          return all.length === ids.length && new Set(all).size === ids.length;
        };
        await until(exactlyOnce, 150_000, 'every record on exactly one side', 1000).catch((error: unknown) => {
          const both = sides.dlq.filter((id) => sides.work.includes(id));
          const missing = ids.filter((id) => !sides.dlq.includes(id) && !sides.work.includes(id));
          throw new Error(`${(error as Error).message}: ${sides.dlq.length} on the DLQ, ${sides.work.length} on the work queue, ${both.length} on both, ${missing.length} on neither; last recover: ${lastRecover}`);
        });
        assert.equal((await client.get('/api/session')).body.interrupted.length, 0, 'the journal is finished');
      } finally {
        await running?.close();
        for (const q of [queue, dlq]) await transport.purge?.(q).catch(() => undefined);
        await transport.close();
        rmSync(journalDir, { recursive: true, force: true });
      }
    });
  });
}
}
