/** `data` does not match the schema registered for its URN. Thrown by `validate` and by wrapped handlers. */
export class InvalidPayloadError extends Error {
  override readonly name = 'InvalidPayloadError';
  constructor(
    /** The message URN whose schema was applied. */
    readonly urn: string,
    /** The first violation, `"<dotted path>: <reason>"`. */
    readonly violation: string,
  ) {
    super(`data of ${urn} does not match its payload schema: ${violation}`);
  }
}
