/** Reading a row's queues back through a transport's own tools (scan, depth), after the consumer stopped. */
import type { Transport } from '@babelqueue/core';
import type { Inspection } from './driver.js';

/** Every record of `queue` with its native metadata, oldest first. */
export async function scanAll(transport: Transport, queue: string): Promise<Inspection['dlq']> {
  const records: { body: Buffer; headers: Inspection['dlq'][number]['headers'] }[] = [];
  for await (const record of transport.scan!(queue)) records.push({ body: record.body, headers: record.headers });
  return records;
}

/** `left` from the transport's depth, the DLQ from its scan. */
export async function inspectWith(transport: Transport, queue: string, dlq: string): Promise<Inspection> {
  try {
    return { left: await transport.depth!(queue), dlq: await scanAll(transport, dlq) };
  } finally {
    await transport.close();
  }
}
