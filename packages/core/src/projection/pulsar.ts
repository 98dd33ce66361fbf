import { BQ_CONTRACT_KEYS, bqStrings } from './bq-strings.js';
import { toProjection, type ProjectionSource, type Riders } from './source.js';

/**
 * The Pulsar message properties (FACTS §4), all strings: `bq-job`,
 * `bq-trace-id`, `bq-message-id`, `bq-schema-version`, `bq-source-lang`,
 * `bq-attempts`. Riders join them; a contract key (including `bq-delay`) wins.
 * Never set `eventTime`: the publish time is broker-set.
 */
export function projectPulsar(source: ProjectionSource, riders?: Riders): Record<string, string> {
  return bqStrings(toProjection(source), riders, BQ_CONTRACT_KEYS);
}
