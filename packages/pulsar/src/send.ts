/** One message to send: the bytes exactly as given and the string properties. */
export interface Send {
  readonly body: Buffer;
  readonly properties: Readonly<Record<string, string>>;
  /** Deliver no earlier than this many ms from now (0: now). */
  readonly delayMs?: number;
}
