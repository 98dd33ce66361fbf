import type { HeaderValue } from '../transport/transport.js';

/**
 * The replay-bypass header (ADR-0027): set to `"1"` by a redrive with
 * `bypass`, carried in native metadata, never in the envelope.
 */
export const REPLAY_BYPASS_HEADER = 'bq-replay-bypass';

/** True when the delivery is a replay: the bypass header is present and not empty. */
export function isReplay(headers: Readonly<Record<string, HeaderValue | undefined>> | undefined): boolean {
  const value = headers?.[REPLAY_BYPASS_HEADER];
  return value !== undefined && value !== null && String(value) !== '';
}

/**
 * Runs `effect` (an external side effect: e-mail, charge, webhook) unless the
 * delivery is a replay, in which case it is skipped and `undefined` returned.
 *
 * @example
 * ```ts
 * app.handle('urn:babel:orders:created', async (data, message) => {
 *   await saveOrder(data);                                        // always
 *   await bypassExternalEffects(message.headers, () => sendMail(data)); // not on a replay
 * });
 * ```
 */
export function bypassExternalEffects<T>(
  headers: Readonly<Record<string, HeaderValue | undefined>> | undefined,
  effect: () => T,
): T | undefined {
  return isReplay(headers) ? undefined : effect();
}
