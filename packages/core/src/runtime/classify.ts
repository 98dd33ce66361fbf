import { EnvelopeCodec } from '../envelope/codec.js';
import { EnvelopeValidator } from '../envelope/validator.js';
import type { Envelope } from '../envelope/types.js';
import { decodeUtf8Strict } from '../envelope/utf8.js';

/** The body of one delivery, read: an accepted envelope, or poison with the reason. */
export type Classified =
  | { readonly kind: 'envelope'; readonly envelope: Envelope; readonly urn: string }
  | { readonly kind: 'poison'; readonly why: string };

/** Reports a tolerant-decode warning (a forbidden key, list data) without the body. */
export type WarningSink = (message: string, pointer: string) => void;

/**
 * Decides whether a body is an envelope a handler may see. Anything that is
 * not valid UTF-8, not a JSON object, has no identity (`job`/`urn`) or fails
 * the consumer-side rules is poison, never the unknown-URN path.
 */
export function classifyBody(body: Buffer, maxBodyBytes: number, onWarning: WarningSink): Classified {
  if (body.length > maxBodyBytes) {
    return { kind: 'poison', why: `body of ${body.length} bytes exceeds the ${maxBodyBytes}-byte limit` };
  }
  const text = decodeUtf8Strict(body);
  if (text === null) return { kind: 'poison', why: 'body is not valid UTF-8' };
  const decoded = EnvelopeCodec.decode(text, onWarning);
  const urn = EnvelopeCodec.urn(decoded);
  if (urn === null) return { kind: 'poison', why: whyNoIdentity(text, decoded) };
  const reason = EnvelopeValidator.check(decoded);
  if (reason !== null) return { kind: 'poison', why: `envelope rejected: ${reason}` };
  return { kind: 'envelope', envelope: decoded as Envelope, urn };
}

/** Only on the poison path: tells apart the ways a body can lack an identity. */
function whyNoIdentity(text: string, decoded: object): string {
  if (Object.keys(decoded).length > 0) return 'envelope has neither a valid job nor a valid urn';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text.length === 0 ? 'body is empty' : 'body is not valid JSON';
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return 'body is not a JSON object';
  return 'envelope was rejected by the decoder (see the decode warning)';
}
