import { Ajv, type ValidateFunction } from 'ajv';
import { InvalidPayloadError } from './invalid-payload-error.js';
import { toViolation, type PayloadViolation } from './violation.js';

/** One entry of a schema registry (`registry.json`): the URN and its data schema. */
export interface RegistryEntry {
  readonly urn: string;
  readonly schema: object;
  readonly owner?: string;
  readonly status?: string;
}

/**
 * Where schemas come from: a function URN → schema (undefined: no schema), a
 * Map, a plain object keyed by URN, or registry entries.
 */
export type PayloadSchemaSource =
  | ((urn: string) => object | undefined)
  | ReadonlyMap<string, object>
  | Readonly<Record<string, object>>
  | readonly RegistryEntry[];

/**
 * Opt-in per-URN validation of an envelope's `data` against a JSON Schema
 * (draft-07; ADR-0024). A URN without a schema is not checked. `enum` and
 * `const` compare strictly (`"1"` is not `1`); keywords draft-07 does not
 * define (such as `x-gdpr-sensitive`) are ignored.
 *
 * @example
 * ```ts
 * const schemas = new PayloadSchemas({ 'urn:babel:orders:created': { type: 'object', required: ['order_id'] } });
 * schemas.check('urn:babel:orders:created', {});             // "order_id: missing_required"
 * app.handle('urn:babel:orders:created', schemas.wrap(async (data, msg) => { ... }));
 * ```
 */
export class PayloadSchemas {
  private readonly lookup: (urn: string) => object | undefined;
  private readonly ajv = new Ajv({ strict: false, allErrors: false, validateSchema: false, logger: false });
  private readonly compiled = new WeakMap<object, ValidateFunction>();

  constructor(source: PayloadSchemaSource) {
    this.lookup = toLookup(source);
  }

  /** The schema registered for `urn`, if any. */
  schemaFor(urn: string): object | undefined {
    return this.lookup(urn);
  }

  /** The first violation as `{ path, reason }`, or null (also when the URN has no schema). */
  violation(urn: string, data: unknown): PayloadViolation | null {
    const schema = this.lookup(urn);
    if (schema === undefined) return null;
    const validate = this.compile(schema);
    if (validate(data)) return null;
    const error = validate.errors?.[0];
    return error === undefined ? { path: '<root>', reason: 'not_an_object' } : toViolation(error, data);
  }

  /** `"<dotted path>: <reason>"` for the first violation, or null. */
  check(urn: string, data: unknown): string | null {
    const found = this.violation(urn, data);
    return found === null ? null : `${found.path}: ${found.reason}`;
  }

  /** True when `data` matches the URN's schema (or the URN has none). */
  isValid(urn: string, data: unknown): boolean {
    return this.violation(urn, data) === null;
  }

  /** Throws {@link InvalidPayloadError} on the first violation. */
  validate(urn: string, data: unknown): void {
    const violation = this.check(urn, data);
    if (violation !== null) throw new InvalidPayloadError(urn, violation);
  }

  /**
   * Guards a handler: invalid `data` throws {@link InvalidPayloadError} before
   * the handler runs, so the message takes the retry / dead-letter path.
   */
  wrap<D, M extends { readonly urn: string }, R>(handler: (data: D, message: M) => R): (data: D, message: M) => R {
    return (data, message) => {
      this.validate(message.urn, data);
      return handler(data, message);
    };
  }

  private compile(schema: object): ValidateFunction {
    let validate = this.compiled.get(schema);
    if (validate === undefined) {
      validate = this.ajv.compile(schema);
      this.compiled.set(schema, validate);
    }
    return validate;
  }
}

function toLookup(source: PayloadSchemaSource): (urn: string) => object | undefined {
  if (typeof source === 'function') return source;
  if (source instanceof Map) return (urn) => source.get(urn);
  if (Array.isArray(source)) {
    const byUrn = new Map((source as readonly RegistryEntry[]).map((entry) => [entry.urn, entry.schema]));
    return (urn) => byUrn.get(urn);
  }
  const record = source as Readonly<Record<string, object>>;
  return (urn) => (Object.hasOwn(record, urn) ? record[urn] : undefined);
}
