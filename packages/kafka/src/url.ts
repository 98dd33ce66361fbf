import { ConfigurationError } from '@babelqueue/core';
import type { SASLOptions } from 'kafkajs';
import type { Ordering } from './partition-batch.js';
import { DEFAULT_RETRY_TIERS_MS } from './retry-tiers.js';

/** What a `kafka://` URL says. */
export interface KafkaUrlSettings {
  readonly brokers: string[];
  readonly groupId?: string;
  readonly clientId?: string;
  readonly retryTiersMs?: readonly number[];
  readonly ssl?: boolean;
  readonly sasl?: SASLOptions;
  readonly ordering?: Ordering;
}

const MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;

/**
 * Parses `kafka://[user:pass@]host:port[,host:port…][?groupId=…&clientId=…&retryTiersMs=500,1000&ordering=key&ssl=true&mechanism=plain]`.
 * `retryTiersMs=default` selects {@link DEFAULT_RETRY_TIERS_MS}; extra
 * bootstrap servers may also be given as `brokers=host:port,…` (a parsed
 * `URL` object cannot hold a comma-separated host list).
 */
export function parseKafkaUrl(url: string | URL): KafkaUrlSettings {
  const text = typeof url === 'string' ? url : url.href;
  const m = /^kafka:\/\/(?:([^@/?#]*)@)?([^/?#]*)[^?#]*(?:\?([^#]*))?/i.exec(text.trim());
  if (!m) throw new ConfigurationError(`not a kafka:// URL: "${mask(text)}" (expected kafka://host:port[,host:port])`);
  const [, userInfo, hosts = '', query = ''] = m;
  const params = new URLSearchParams(query);
  const brokers = [...hosts.split(','), ...(params.get('brokers')?.split(',') ?? [])]
    .map((h) => h.trim())
    .filter((h) => h !== '')
    .map((h) => (/:\d+$/.test(h) ? h : `${h}:9092`));
  if (brokers.length === 0) throw new ConfigurationError(`kafka:// URL names no broker: "${mask(text)}"`);

  const settings: { -readonly [K in keyof KafkaUrlSettings]: KafkaUrlSettings[K] } = { brokers };
  const groupId = params.get('groupId');
  if (groupId) settings.groupId = groupId;
  const clientId = params.get('clientId');
  if (clientId) settings.clientId = clientId;
  const tiers = params.get('retryTiersMs');
  if (tiers) settings.retryTiersMs = tiers === 'default' ? DEFAULT_RETRY_TIERS_MS : tiers.split(',').map((t) => Number(t.trim()));
  const ordering = params.get('ordering');
  if (ordering) settings.ordering = ordering as Ordering;
  const ssl = params.get('ssl');
  if (ssl !== null) settings.ssl = ssl === 'true' || ssl === '1';
  if (userInfo !== undefined && userInfo !== '') {
    const [user = '', pass = ''] = userInfo.split(':');
    const mechanism = (params.get('mechanism') ?? 'plain').toLowerCase();
    if (!(MECHANISMS as readonly string[]).includes(mechanism)) {
      throw new ConfigurationError(`unsupported SASL mechanism "${mechanism}" (use ${MECHANISMS.join(', ')})`);
    }
    settings.sasl = {
      mechanism: mechanism as (typeof MECHANISMS)[number],
      username: decodeURIComponent(user),
      password: decodeURIComponent(pass),
    } as SASLOptions;
  }
  return settings;
}

function mask(text: string): string {
  return text.replace(/\/\/[^@/]*@/, '//***@');
}
