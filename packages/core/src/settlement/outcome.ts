/**
 * What happened to one delivery before it is settled. The runtime produces it
 * (gate → decode → route → handler); the settlement policy turns it into a
 * verdict.
 */
export type Outcome =
  /** The native schema-version metadata is present, not blank and not "1"; the body was not decoded. */
  | { readonly kind: 'version-gated'; readonly value: string }
  /** The body does not decode to an accepted envelope (or the transport said so). */
  | { readonly kind: 'poison'; readonly why: string }
  /** A valid envelope whose URN has no handler. */
  | { readonly kind: 'unknown-urn'; readonly urn: string }
  /** The handler returned. */
  | { readonly kind: 'handled' }
  /**
   * The handler threw (or ran past the handler timeout). `unrecoverable`: it
   * threw an `UnrecoverableError`, so the remaining attempts are skipped.
   */
  | { readonly kind: 'failed'; readonly error: unknown; readonly unrecoverable?: boolean }
  /** The worker's shutdown deadline passed while the handler ran: not a failure, not handled. */
  | { readonly kind: 'interrupted' };

export type OutcomeKind = Outcome['kind'];
