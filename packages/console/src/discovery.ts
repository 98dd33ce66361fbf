import { dlqName, type Transport } from '@babelqueue/core';

/** What discovery found: every DLQ of the broker, or why it cannot list them. */
export interface Discovery {
  /** The binding can list the broker's queues (`listQueues`). */
  readonly supported: boolean;
  /** The DLQs found (names ending in the binding's DLQ suffix), sorted. */
  readonly dlqs: string[];
  /** Why the list is missing or partial (a broker error, or a binding that cannot list). */
  readonly note?: string;
}

/** One DLQ of the overview. */
export interface OverviewEntry {
  readonly name: string;
  /** Named when the console started (else discovered). */
  readonly configured: boolean;
  /** Records waiting, or null when the broker could not tell. */
  readonly depth: number | null;
}

/** Depth reads the overview makes at once: hundreds of DLQs at once overwhelm a client (kafkajs drops answers). */
const DEPTH_CONCURRENCY = 8;

/** The depth of every DLQ named, `DEPTH_CONCURRENCY` at a time. */
export async function depthsOf(names: readonly string[], configured: readonly string[], depth: (dlq: string) => Promise<number | null>): Promise<OverviewEntry[]> {
  const out: OverviewEntry[] = names.map((name) => ({ name, configured: configured.includes(name), depth: null }));
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < names.length; i = next++) {
      out[i] = { ...(out[i] as OverviewEntry), depth: await depth(names[i] as string).catch(() => null) };
    }
  };
  await Promise.all(Array.from({ length: Math.min(DEPTH_CONCURRENCY, names.length) }, worker));
  return out;
}

/** DLQs the console lists at most (the rest are counted in the note). */
export const DISCOVER_MAX = 500;

/** The suffix the binding gives a DLQ (`.dlq`; `-dlq` on SQS). */
export function dlqSuffix(transport: Transport): string {
  const named = transport.rules.dlqName ? transport.rules.dlqName('q', undefined) : dlqName('q');
  return named.startsWith('q') ? named.slice(1) : '.dlq';
}

/**
 * Every DLQ of the broker, found with the binding's `listQueues` (Redis keys,
 * Kafka topics, SQS `ListQueues`, Pulsar's admin API): the queues whose names
 * end in the binding's DLQ suffix. A binding that cannot list its queues
 * (RabbitMQ over AMQP 0-9-1, Artemis, Service Bus) answers `supported: false`
 * with a note saying so; a broker error answers with the error as the note.
 */
export async function discoverDlqs(transport: Transport): Promise<Discovery> {
  if (typeof transport.listQueues !== 'function') {
    return { supported: false, dlqs: [], note: `the ${transport.rules.name} binding cannot list the broker's queues, so only the DLQs named when the console started are shown` };
  }
  let names: string[];
  try {
    names = await transport.listQueues();
  } catch (error) {
    return { supported: true, dlqs: [], note: `listing the broker's queues failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  const suffix = dlqSuffix(transport);
  const dlqs = [...new Set(names.filter((name) => name.endsWith(suffix) && name.length > suffix.length))].sort();
  if (dlqs.length <= DISCOVER_MAX) return { supported: true, dlqs };
  return { supported: true, dlqs: dlqs.slice(0, DISCOVER_MAX), note: `${dlqs.length} DLQs found; the first ${DISCOVER_MAX} by name are listed` };
}
