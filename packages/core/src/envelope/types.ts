import type { DeadLetterReason } from '../settlement/decision.js';

/** Any value JSON can carry. */
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;

/** A JSON object: the shape of `data`. */
export interface JsonObject {
  [key: string]: JsonValue;
}

/** The producer-set, immutable `meta` block of an envelope. */
export interface EnvelopeMeta {
  /** RFC 4122 v4 UUID of this message (the idempotency key). */
  id: string;
  /** Logical queue name, not the broker key. */
  queue: string;
  /** Language of the producing SDK; this SDK stamps `"node"`. */
  lang: string;
  /** Always `1`: the envelope is frozen at schema version 1. */
  schema_version: number;
  /** Production time, Unix epoch milliseconds (UTC). */
  created_at: number;
  /** Fields from other producers are kept as they came. */
  [key: string]: unknown;
}

/**
 * The optional `dead_letter` block a record on a dead-letter queue carries
 * (seed 001). Field order on the wire is the order below.
 */
export interface DeadLetterBlock {
  /** Why it was dead-lettered. */
  reason: DeadLetterReason;
  /** The error message, or null. */
  error: string | null;
  /** The error's type name, or null. */
  exception: string | null;
  /** When it was dead-lettered, Unix epoch milliseconds (UTC). */
  failed_at: number;
  /** The queue it was consumed from. */
  original_queue: string;
  /** The counted delivery attempt at which it gave up. */
  attempts: number;
  /** The SDK that dead-lettered it (`"node"` here). */
  lang: string;
  [key: string]: unknown;
}

/**
 * The canonical BabelQueue envelope, schema version 1. Key order on the wire:
 * `job`, `trace_id`, `data`, `meta`, `attempts`, unknown fields, `dead_letter`.
 *
 * A consumed envelope may name its URN with the inbound alias `urn` instead of
 * `job`: read the URN with {@link EnvelopeCodec.urn}, never `env.job` directly.
 */
export interface Envelope {
  /** The message URN (`urn:babel:<context>:<event>`). */
  job: string;
  /** Correlation id, preserved across every hop. */
  trace_id: string;
  /** The business payload: a JSON object. */
  data: JsonObject;
  meta: EnvelopeMeta;
  /** Transport retry counter, starts at 0. */
  attempts: number;
  /** Present only on dead-letter records. */
  dead_letter?: DeadLetterBlock;
  /** Unknown fields from other producers are kept. */
  [key: string]: unknown;
}

/**
 * What {@link EnvelopeCodec.decode} returns: the decoded JSON object (forbidden
 * keys removed), or an empty object for a body that is not a usable JSON
 * object. Nothing about its fields is promised until
 * {@link EnvelopeCodec.accepts} (a type guard) says it is an {@link Envelope}.
 */
export type DecodedEnvelope = Record<string, unknown>;

/**
 * A decode warning sink: `message` never contains the body; `pointer` is the
 * RFC 6901 JSON pointer of the offending member (`/timestamp`, `/meta/ts`, `/data`).
 */
export type WarningHandler = (message: string, pointer: string) => void;
