import type { HttpResponse, PulsarConnection } from './connection.js';
import { reasonOf } from './connection.js';
import { PulsarAdminError } from './errors.js';
import { topicPath, type Topic } from './topics.js';

/** A consumer as the topic's stats list it. */
export interface ListedConsumer {
  /** Permits the broker holds for it: how many more messages it may be sent. */
  readonly availablePermits: number;
  readonly unackedMessages: number;
}

/** Pulsar's `MessageId.earliest` as the admin API reads a position. */
const EARLIEST = { ledgerId: -1, entryId: -1, partitionIndex: -1 };

/**
 * The admin REST calls the binding needs, on the same web service as the
 * WebSocket API: creating a subscription (so a topic keeps what is published
 * before its first consumer), peeking a subscription's backlog (scan, browse) and
 * skipping it (purge), and a start-up probe.
 */
export class PulsarAdmin {
  constructor(private readonly connection: PulsarConnection) {}

  /** Creates `subscription` on `topic` (the topic too, where auto-creation allows), starting at the earliest message; one that exists is left as it is. */
  async ensureSubscription(topic: Topic, subscription: string, position: 'earliest' | 'latest'): Promise<void> {
    const res = await this.connection.request(
      'PUT',
      `/admin/v2/${topicPath(topic)}/subscription/${encodeURIComponent(subscription)}`,
      position === 'earliest' ? EARLIEST : undefined,
    );
    if (res.status === 409 || (res.status >= 200 && res.status < 300)) return;
    throw new PulsarAdminError(res.status, `cannot create subscription "${subscription}" on ${topic.name} (HTTP ${res.status}): ${reasonOf(res.body)}`);
  }

  /**
   * The entry at `position` (1 = oldest) of the subscription's backlog,
   * without consuming it: the body and the `X-Pulsar-*` headers (properties,
   * message id, batch size). Undefined past the end, or when the topic or the
   * subscription does not exist.
   */
  async peekEntry(topic: Topic, subscription: string, position: number): Promise<HttpResponse | undefined> {
    const res = await this.connection.request(
      'GET',
      `/admin/v2/${topicPath(topic)}/subscription/${encodeURIComponent(subscription)}/position/${position}`,
    );
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw new PulsarAdminError(res.status, `cannot peek ${topic.name} (HTTP ${res.status}): ${reasonOf(res.body)}`);
    return res;
  }

  /**
   * How many entries the subscription has not acknowledged yet (0 when the
   * topic or subscription does not exist): Pulsar counts a producer's batch
   * as one entry.
   */
  async backlog(topic: Topic, subscription: string): Promise<number> {
    const res = await this.connection.request('GET', `/admin/v2/${topicPath(topic)}/stats`);
    if (res.status === 404) return 0;
    if (res.status !== 200) throw new PulsarAdminError(res.status, `cannot read the stats of ${topic.name} (HTTP ${res.status}): ${reasonOf(res.body)}`);
    const stats = JSON.parse(res.body.toString('utf8')) as { subscriptions?: Record<string, { msgBacklog?: number }> };
    return stats.subscriptions?.[subscription]?.msgBacklog ?? 0;
  }

  /**
   * The consumers the broker lists on a subscription, by consumer name, with
   * the permits each holds and its unacknowledged messages (none when the
   * topic or subscription does not exist).
   */
  async consumers(topic: Topic, subscription: string): Promise<Map<string, ListedConsumer>> {
    const res = await this.connection.request('GET', `/admin/v2/${topicPath(topic)}/stats`);
    if (res.status === 404) return new Map();
    if (res.status !== 200) throw new PulsarAdminError(res.status, `cannot read the stats of ${topic.name} (HTTP ${res.status}): ${reasonOf(res.body)}`);
    type Stats = { subscriptions?: Record<string, { consumers?: { consumerName?: unknown; availablePermits?: unknown; unackedMessages?: unknown }[] }> };
    const stats = JSON.parse(res.body.toString('utf8')) as Stats;
    const listed = new Map<string, ListedConsumer>();
    for (const consumer of stats.subscriptions?.[subscription]?.consumers ?? []) {
      if (typeof consumer.consumerName !== 'string') continue;
      listed.set(consumer.consumerName, {
        availablePermits: typeof consumer.availablePermits === 'number' ? consumer.availablePermits : 0,
        unackedMessages: typeof consumer.unackedMessages === 'number' ? consumer.unackedMessages : 0,
      });
    }
    return listed;
  }

  /** The persistent topics of a namespace: full names (`persistent://tenant/namespace/local`). */
  async topics(tenant: string, namespace: string): Promise<string[]> {
    const res = await this.connection.request('GET', `/admin/v2/persistent/${encodeURIComponent(tenant)}/${encodeURIComponent(namespace)}`);
    if (res.status !== 200) throw new PulsarAdminError(res.status, `cannot list the topics of ${tenant}/${namespace} (HTTP ${res.status}): ${reasonOf(res.body)}`);
    return JSON.parse(res.body.toString('utf8')) as string[];
  }

  /** Acknowledges the subscription's whole backlog (a topic or subscription that does not exist has none). */
  async skipAll(topic: Topic, subscription: string): Promise<void> {
    const res = await this.connection.request('POST', `/admin/v2/${topicPath(topic)}/subscription/${encodeURIComponent(subscription)}/skip_all`);
    if (res.status === 404 || (res.status >= 200 && res.status < 300)) return;
    throw new PulsarAdminError(res.status, `cannot purge ${topic.name} (HTTP ${res.status}): ${reasonOf(res.body)}`);
  }

  /**
   * Start-up probe: lists the tenant's namespaces. 200 and 403 (the token is
   * valid but may not administer the tenant, as a produce/consume role) pass;
   * 401 is refused credentials and 404 an unknown tenant.
   */
  async probe(tenant: string): Promise<void> {
    const res = await this.connection.request('GET', `/admin/v2/namespaces/${encodeURIComponent(tenant)}`, undefined, 10_000);
    if (res.status === 200 || res.status === 403) return;
    throw new PulsarAdminError(res.status, `Pulsar answered HTTP ${res.status} for tenant "${tenant}": ${reasonOf(res.body)}`);
  }
}
