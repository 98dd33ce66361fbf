import { envelopeSchema, validate as compiled } from './envelope-schema.generated.js';

/** The reasons the offline schema check reports (FACTS §2). */
export type SchemaViolationReason =
  | 'not_an_object'
  | 'missing_required'
  | 'wrong_type'
  | 'empty_string'
  | 'not_a_uuid'
  | 'not_in_enum'
  | 'wrong_const'
  | 'below_minimum';

/** The first schema violation: where (an RFC 6901 JSON pointer, `""` for the root) and why. */
export interface SchemaViolation {
  readonly pointer: string;
  readonly reason: SchemaViolationReason;
}

/** Thrown by `SchemaValidator.validate` on the first violation. */
export class SchemaViolationError extends Error {
  override readonly name = 'SchemaViolationError';
  constructor(
    readonly pointer: string,
    readonly reason: SchemaViolationReason,
  ) {
    super(`envelope does not match the canonical schema: ${pointer}: ${reason}`);
  }
}

interface AjvError {
  readonly instancePath: string;
  readonly keyword: string;
  readonly params: { readonly missingProperty?: string; readonly type?: string | readonly string[] };
}

interface CompiledValidator {
  (data: unknown): boolean;
  errors?: readonly AjvError[] | null;
}

const validateCompiled = compiled as unknown as CompiledValidator;

/** The first violation of the canonical envelope schema, or null. */
function violation(env: unknown): SchemaViolation | null {
  if (validateCompiled(env)) return null;
  // Ajv sets `errors` whenever validation fails; with allErrors off it holds the first one.
  const error = validateCompiled.errors![0]!;
  switch (error.keyword) {
    case 'required':
      // The schema's required names hold no "/" or "~", so they need no pointer escaping.
      return { pointer: `${error.instancePath}/${error.params.missingProperty}`, reason: 'missing_required' };
    case 'type':
      return { pointer: error.instancePath, reason: error.params.type === 'object' ? 'not_an_object' : 'wrong_type' };
    case 'minLength':
      return { pointer: error.instancePath, reason: 'empty_string' };
    case 'format':
      return { pointer: error.instancePath, reason: 'not_a_uuid' };
    case 'enum':
      return { pointer: error.instancePath, reason: 'not_in_enum' };
    case 'const':
      return { pointer: error.instancePath, reason: 'wrong_const' };
    default:
      // The only other keyword the schema uses.
      return { pointer: error.instancePath, reason: 'below_minimum' };
  }
}

/** The shape of {@link SchemaValidator} (declared so `validate` can be an assertion). */
export interface SchemaValidatorApi {
  /** True when the value matches the canonical envelope schema. */
  isValid(env: unknown): boolean;
  /** `"<json-pointer>: <reason>"` for the first violation (`"/meta/schema_version: wrong_const"`), or null. */
  check(env: unknown): string | null;
  /** The first violation as `{ pointer, reason }`, or null. */
  violation(env: unknown): SchemaViolation | null;
  /** Throws {@link SchemaViolationError} on the first violation. */
  validate(env: unknown): void;
  /** The bundled canonical envelope JSON Schema (draft-07). */
  readonly schema: Readonly<Record<string, unknown>>;
}

/**
 * Offline structural check against the bundled canonical envelope JSON Schema
 * (every field, type and constraint of the producer schema, not only the
 * consumer-side rules). The schema is compiled at build time, so this needs
 * no dependency and no network. Paths are RFC 6901 JSON pointers; the root is `""`.
 *
 * @example
 * ```ts
 * SchemaValidator.check(EnvelopeCodec.make('urn:babel:orders:created', {})); // null
 * SchemaValidator.check({ job: 'x' });                                       // "/trace_id: missing_required"
 * ```
 */
export const SchemaValidator: SchemaValidatorApi = {
  isValid(env) {
    return validateCompiled(env);
  },
  check(env) {
    const found = violation(env);
    return found === null ? null : `${found.pointer}: ${found.reason}`;
  },
  violation,
  validate(env) {
    const found = violation(env);
    if (found !== null) throw new SchemaViolationError(found.pointer, found.reason);
  },
  schema: envelopeSchema,
};
