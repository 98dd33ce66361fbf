/** The reasons a payload check reports (ADR-0024; `violates_<keyword>` for draft-07 keywords beyond the common subset). */
export type PayloadViolationReason =
  | 'wrong_const'
  | 'not_in_enum'
  | 'not_a_string'
  | 'below_min_length'
  | 'not_an_integer'
  | 'not_a_number'
  | 'not_a_boolean'
  | 'not_null'
  | 'not_an_object'
  | 'missing_required'
  | 'additional_not_allowed'
  | 'not_an_array'
  | 'below_minimum'
  | `violates_${string}`;

/** The first violation: a dotted path (`items[2].sku`, `<root>` for data itself) and a reason. */
export interface PayloadViolation {
  readonly path: string;
  readonly reason: PayloadViolationReason;
}

/** What Ajv reports for one failed keyword. */
export interface AjvErrorLike {
  readonly instancePath: string;
  readonly keyword: string;
  readonly params: Readonly<Record<string, unknown>>;
}

const TYPE_REASONS: Record<string, PayloadViolationReason> = {
  string: 'not_a_string',
  integer: 'not_an_integer',
  number: 'not_a_number',
  boolean: 'not_a_boolean',
  null: 'not_null',
  object: 'not_an_object',
  array: 'not_an_array',
};

const KEYWORD_REASONS: Record<string, PayloadViolationReason> = {
  const: 'wrong_const',
  enum: 'not_in_enum',
  minLength: 'below_min_length',
  minimum: 'below_minimum',
  required: 'missing_required',
  additionalProperties: 'additional_not_allowed',
};

/** Translates Ajv's first error into the SDK-wide path and reason. */
export function toViolation(error: AjvErrorLike, data: unknown): PayloadViolation {
  const tokens = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/').map(unescapeToken);
  let path = dottedPath(tokens, data);
  const child = error.keyword === 'required' ? error.params.missingProperty : error.keyword === 'additionalProperties' ? error.params.additionalProperty : undefined;
  if (typeof child === 'string') path = path === '' ? child : `${path}.${child}`;
  return { path: path === '' ? '<root>' : path, reason: reasonOf(error) };
}

function reasonOf(error: AjvErrorLike): PayloadViolationReason {
  if (error.keyword === 'type') {
    const first = String(error.params.type).split(',')[0] ?? '';
    return TYPE_REASONS[first] ?? 'not_an_object';
  }
  return KEYWORD_REASONS[error.keyword] ?? `violates_${error.keyword}`;
}

/** `["items", "2", "sku"]` over the data → `items[2].sku` (an index only where the value is an array). */
function dottedPath(tokens: string[], data: unknown): string {
  let path = '';
  let node = data;
  for (const token of tokens) {
    if (Array.isArray(node)) {
      path += `[${token}]`;
      node = node[Number(token)];
    } else {
      path = path === '' ? token : `${path}.${token}`;
      node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[token] : undefined;
    }
  }
  return path;
}

function unescapeToken(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}
