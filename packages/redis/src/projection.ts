/**
 * `__bq_frame`: how the legacy layout carries out-of-band headers (traceparent,
 * bq-replay-bypass) on a Redis list, which has no per-message metadata. The
 * frame is the transport's, never part of the envelope:
 * `{"__bq_frame":1,"headers":{…},"body":"<the envelope as a JSON string>"}`.
 */

const MARKER = Buffer.from('"__bq_frame"');
const OPEN_BRACE = 0x7b;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Headers with blank keys or values dropped; empty when none is usable. */
export function usableHeaders(headers: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers === undefined) return out;
  for (const [key, value] of Object.entries(headers)) {
    if (typeof value === 'string' && key.trim() !== '' && value.trim() !== '') out[key] = value;
  }
  return out;
}

/**
 * The value to push for `body`: the frame when at least one usable header
 * remains, otherwise the bare envelope byte-for-byte.
 */
export function frameValue(body: Buffer, headers: Readonly<Record<string, string>> | undefined): Buffer {
  const usable = usableHeaders(headers);
  if (Object.keys(usable).length === 0) return body;
  return Buffer.from(
    `{"__bq_frame":1,"headers":${JSON.stringify(usable)},"body":${JSON.stringify(body.toString('utf8'))}}`,
  );
}

/** A stored value read back: the envelope body and the headers it carried. */
export interface Unframed {
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
  /** True when the value was a frame (its headers may still be empty). */
  readonly framed: boolean;
}

/**
 * Detects a frame: the value starts with `{`, contains `"__bq_frame"`, and
 * parses to an object whose `__bq_frame` is truthy and whose `body` is a
 * string. Anything else is a bare body with no headers.
 */
export function unframe(value: Buffer): Unframed {
  const bare: Unframed = { body: value, headers: {}, framed: false };
  if (value[0] !== OPEN_BRACE || !value.includes(MARKER)) return bare;
  let parsed: unknown;
  try {
    parsed = JSON.parse(strictUtf8.decode(value));
  } catch {
    return bare;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return bare;
  const frame = parsed as { __bq_frame?: unknown; headers?: unknown; body?: unknown };
  if (!frame.__bq_frame || typeof frame.body !== 'string') return bare;
  const headers: Record<string, string> = {};
  if (typeof frame.headers === 'object' && frame.headers !== null && !Array.isArray(frame.headers)) {
    for (const [key, v] of Object.entries(frame.headers)) if (typeof v === 'string') headers[key] = v;
  }
  return { body: Buffer.from(frame.body, 'utf8'), headers, framed: true };
}
