/** One field a schema marked `x-gdpr-sensitive`. */
export interface SensitivePath {
  /** Dotted path from the schema root (`profile.full_name`); array items as `addresses[].line`; the root is `""`. */
  readonly path: string;
  /** The mark's category string, or `""` when the mark was `true`. */
  readonly category: string;
}

/**
 * Every field a JSON Schema marks `x-gdpr-sensitive` (`true`, or a non-empty
 * category string such as `"email"`; any other value marks nothing), found
 * through `properties` and `items`, sorted by path. The keyword never affects
 * validation.
 */
export function sensitivePaths(schema: unknown): SensitivePath[] {
  const out: SensitivePath[] = [];
  collect(schema, '', out);
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function collect(schema: unknown, path: string, out: SensitivePath[]): void {
  if (!isObject(schema)) return;
  const mark = schema['x-gdpr-sensitive'];
  if (mark === true) out.push({ path, category: '' });
  else if (typeof mark === 'string' && mark !== '') out.push({ path, category: mark });
  const properties = schema.properties;
  if (isObject(properties)) {
    for (const [name, sub] of Object.entries(properties)) collect(sub, path === '' ? name : `${path}.${name}`, out);
  }
  if (isObject(schema.items)) collect(schema.items, `${path}[]`, out);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
