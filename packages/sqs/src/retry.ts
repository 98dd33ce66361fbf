import type { ResolvedReconnectBackoff } from '@babelqueue/core';

/** The pause before the n-th consecutive retry of a failed call: 100 ms doubling, at most 5 s. */
export const CALL_RETRY_BACKOFF: ResolvedReconnectBackoff = Object.freeze({ initialDelayMs: 100, maxDelayMs: 5000, multiplier: 2 });
