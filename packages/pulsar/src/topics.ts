import { ConfigurationError } from '@babelqueue/core';

/** A fully qualified Pulsar topic, split into the parts the REST and WebSocket paths need. */
export interface Topic {
  /** `persistent://tenant/namespace/local`. */
  readonly name: string;
  readonly domain: 'persistent' | 'non-persistent';
  readonly tenant: string;
  readonly namespace: string;
  readonly local: string;
}

const FULL = /^(persistent|non-persistent):\/\/([^/]+)\/([^/]+)\/([^/]+)$/;

/**
 * The topic of a queue: `persistent://<tenant>/<namespace>/<queue>` (seed 000),
 * or the queue itself when it already is a full topic name. A short queue name
 * is one path segment, so it may not contain `/`.
 */
export function topicOf(queue: string, tenant: string, namespace: string): Topic {
  const full = FULL.exec(queue);
  if (full !== null) {
    const [, domain, t, ns, local] = full as unknown as [string, Topic['domain'], string, string, string];
    return { name: queue, domain, tenant: t, namespace: ns, local };
  }
  if (queue.trim() === '' || queue.includes('/') || queue.includes('://')) {
    throw new ConfigurationError(
      `a Pulsar queue is a topic's local name (no "/") or a full topic name persistent://tenant/namespace/topic, got ${JSON.stringify(queue)}`,
    );
  }
  return { name: `persistent://${tenant}/${namespace}/${queue}`, domain: 'persistent', tenant, namespace, local: queue };
}

/** `persistent/tenant/namespace/local`, each part URL-encoded: the tail of the REST and WebSocket paths. */
export function topicPath(topic: Topic): string {
  return [topic.domain, topic.tenant, topic.namespace, topic.local].map(encodeURIComponent).join('/');
}
