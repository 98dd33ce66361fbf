import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { runReadmeExample } from '../../../test/support/readme.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test('the README example prints spans to the console and serves the metrics to Prometheus', async () => {
  const out = await runReadmeExample('otel', '## Use', { METRICS_PORT: String(await freePort()) });
  assert.match(out, /name: 'publish urn:babel:orders:created'/);
  assert.match(out, /name: 'process urn:babel:orders:created'/);
  const metric = (name: string) => new RegExp(`^${name}\\{[^}]*\\} (\\d+)`, 'm').exec(out)?.[1];
  assert.equal(metric('messaging_babelqueue_messages_handled_total'), '1');
  assert.equal(metric('messaging_babelqueue_messages_failed_total'), '3');
  assert.equal(metric('messaging_babelqueue_messages_retried_total'), '2');
  assert.equal(metric('messaging_babelqueue_messages_dropped_total'), '1');
  assert.equal(metric('messaging_babelqueue_messages_in_flight'), '0');
});
