/**
 * What to do with a valid envelope whose URN has no handler (seed 001): the
 * same four strategies, with the same string values, in every SDK.
 */
export const UnknownUrnStrategy = {
  /** Treat it as a failure: retried up to max attempts, then dead-lettered or dropped. The default. */
  FAIL: 'fail',
  /** Acknowledge and drop it: this service legitimately ignores the URN. */
  DELETE: 'delete',
  /** Put it back after the configured delay (rolling deploys), bounded by max attempts. */
  RELEASE: 'release',
  /** Quarantine it on the DLQ, then acknowledge; degrades to delete when the DLQ is off. */
  DEAD_LETTER: 'dead_letter',
} as const;

export type UnknownUrnStrategyValue = (typeof UnknownUrnStrategy)[keyof typeof UnknownUrnStrategy];

const VALUES: ReadonlySet<string> = new Set(Object.values(UnknownUrnStrategy));

/** True when `value` is one of the four strategy strings. */
export function isUnknownUrnStrategy(value: unknown): value is UnknownUrnStrategyValue {
  return typeof value === 'string' && VALUES.has(value);
}
