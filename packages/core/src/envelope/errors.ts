/**
 * `EnvelopeCodec.make` refused its input: a blank URN or queue, or a value
 * JSON cannot carry faithfully (undefined, a function, a symbol, a BigInt,
 * NaN, Infinity, a cycle, a Date or other class instance). Thrown before
 * anything is published. `pointer` is the RFC 6901 JSON pointer of the bad
 * value inside the envelope, e.g. `/job` or `/data/items/2/price`.
 */
export class InvalidMessageError extends TypeError {
  override readonly name = 'InvalidMessageError';
  constructor(
    /** Where the bad value sits in the envelope. */
    readonly pointer: string,
    /** What is wrong with it. */
    readonly problem: string,
  ) {
    super(`${pointer}: ${problem}`);
  }
}

/** Thrown by `EnvelopeValidator.validate`: carries the reason and the rejected envelope. */
export class InvalidEnvelopeError extends Error {
  override readonly name = 'InvalidEnvelopeError';
  constructor(
    /** One of the `EnvelopeValidator.REASON_*` strings. */
    readonly reason: string,
    /** The envelope that failed. */
    readonly envelope: unknown,
  ) {
    super(`invalid envelope: ${reason}`);
  }
}

/**
 * The lossless re-emit functions were given a body that is not a JSON object
 * (they edit top-level members and cannot invent a structure).
 */
export class NotAJsonObjectError extends TypeError {
  override readonly name = 'NotAJsonObjectError';
  constructor(
    /** What the scanner met, without quoting the body. */
    readonly detail: string,
    /** Offset (in bytes for binary input, UTF-16 units for strings) where scanning stopped. */
    readonly offset: number,
  ) {
    super(`body is not a JSON object: ${detail} at offset ${offset}`);
  }
}
