import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { until } from '../../../test/support/until.js';
import { memoryUrl, run } from './support/capture.js';

async function probe(port: number, path: string): Promise<{ code: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { code: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('babelqueue consume --health-port', () => {
  test('serves /readyz and /healthz while it consumes, reports the delivery, and stops with the command', async () => {
    const url = memoryUrl();
    const published = await run(['publish', 'urn:babel:orders:created', '{"order_id":1}', '--url', url, '--queue', 'orders']);
    assert.equal(published.code, 0, published.err);
    const stop = new AbortController();
    let err = '';
    const consuming = run(['consume', '--url', url, '--queue', 'orders', '--health-port', '0', '--json'], {
      signal: stop.signal,
      onStderr: (text) => (err += text),
    });
    try {
      await until(() => /health probes on http:\/\/127\.0\.0\.1:\d+/.test(err), 20_000, 'the probe server');
      const port = Number(/127\.0\.0\.1:(\d+)/.exec(err)![1]);
      await until(async () => (await probe(port, '/healthz')).body.lastSettleAt !== null, 20_000, 'the message settled');
      const ready = await probe(port, '/readyz');
      assert.deepEqual([ready.code, ready.body.status, ready.body.connected, ready.body.consuming, ready.body.queues], [200, 'ok', true, true, ['orders']]);
      assert.equal((await probe(port, '/healthz')).code, 200);
      stop.abort();
      const done = await consuming;
      assert.equal(done.code, 0, done.err);
      await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`), 'the server ends with the command');
    } finally {
      stop.abort();
      await consuming;
    }
  });

  test('bad combinations are usage errors', async () => {
    for (const argv of [['--health-port', '0', '--no-ack'], ['--health-host', '0.0.0.0'], ['--health-port', '70000'], ['--health-port', 'x']]) {
      const result = await run(['consume', '--url', memoryUrl(), '--queue', 'orders', ...argv]);
      assert.equal(result.code, 2, `${argv.join(' ')}: ${result.err}`);
    }
  });
});
