import { ConfigurationError, maskUrl } from '@babelqueue/core';
import type { SqsTransportOptions } from './options.js';

/**
 * The query names of an `sqs://` URL, spelled as the Python SDK spells them,
 * and the option each one sets.
 */
const QUERY: Readonly<Record<string, (value: string, out: Record<string, unknown>) => void>> = {
  endpoint: (v, out) => (out.endpoint = v),
  prefix: (v, out) => (out.queueUrlPrefix = v),
  fifo: (v, out) => (out.fifo = flag('fifo', v)),
  group_id: (v, out) => (out.messageGroupId = v),
  wait_time: (v, out) => (out.waitTimeSeconds = integer('wait_time', v)),
  visibility_timeout: (v, out) => (out.visibilityTimeoutSeconds = integer('visibility_timeout', v)),
  content_dedup: (v, out) => (out.contentBasedDeduplication = flag('content_dedup', v)),
  browse_work_queues: (v, out) => (out.browseWorkQueues = flag('browse_work_queues', v)),
  create_queues: (v, out) => (out.createQueues = flag('create_queues', v)),
  stop_waits_for_poll: (v, out) => (out.stopWaitsForPoll = flag('stop_waits_for_poll', v)),
};

/**
 * Reads `sqs://[region][?endpoint=…&prefix=…&fifo=1&group_id=…&wait_time=20&visibility_timeout=30&content_dedup=1&browse_work_queues=1&create_queues=1&stop_waits_for_poll=1]`,
 * the Python SDK's form (`browse_work_queues`, `create_queues` and `stop_waits_for_poll` are this binding's own: the Python SDK has no such options) (e.g. `sqs://us-east-1?endpoint=http://127.0.0.1:9324`).
 * An empty host leaves the region to the standard AWS chain. Credentials never
 * go in the URL: they come from the AWS chain (or the `credentials` option).
 */
export function parseSqsUrl(url: string | URL): SqsTransportOptions {
  const raw = typeof url === 'string' ? url : url.href;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigurationError(`not a valid SQS URL: ${maskUrl(raw)} (expected e.g. sqs://us-east-1?endpoint=http://127.0.0.1:9324)`);
  }
  if (parsed.protocol !== 'sqs:') throw new ConfigurationError(`an SQS URL starts with sqs://, got ${maskUrl(raw)}`);
  if (parsed.username !== '' || parsed.password !== '') {
    throw new ConfigurationError(`an SQS URL carries no credentials (${maskUrl(raw)}): they come from the standard AWS chain (AWS_ACCESS_KEY_ID, a profile, a role) or the credentials option`);
  }
  if (parsed.port !== '' || (parsed.pathname !== '' && parsed.pathname !== '/')) {
    throw new ConfigurationError(`an SQS URL is sqs://<region>?<options>; the host is the region and there is no port or path (got ${maskUrl(raw)}); queues are named on the App`);
  }
  const out: Record<string, unknown> = {};
  if (parsed.hostname !== '') out.region = parsed.hostname;
  for (const [name, value] of parsed.searchParams) {
    const set = QUERY[name];
    if (set === undefined) {
      throw new ConfigurationError(`unknown SQS URL option "${name}"; known: ${Object.keys(QUERY).join(', ')}`);
    }
    set(value, out);
  }
  return out as SqsTransportOptions;
}

/** The Python SDK's truthy spellings; anything else is false. */
function flag(name: string, value: string): boolean {
  const v = value.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(v)) return false;
  throw new ConfigurationError(`SQS URL option ${name} must be 1/0, true/false, yes/no or on/off, got "${value}"`);
}

function integer(name: string, value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new ConfigurationError(`SQS URL option ${name} must be a whole number of seconds, got "${value}"`);
  return Number(value.trim());
}
