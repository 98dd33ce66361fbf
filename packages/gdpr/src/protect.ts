import type { Cipher } from './cipher.js';
import { DecryptError } from './errors.js';
import { sensitivePaths } from './sensitive-paths.js';

type Leaf = (value: unknown, cipher: Cipher) => { value: unknown } | undefined;

/**
 * Encrypts, in place, every value of `data` at a path the schema marks
 * `x-gdpr-sensitive`: the value's JSON bytes (keys sorted, compact) become
 * `cipher.encrypt(...)`, a string. A marked path the message lacks is skipped;
 * a marked object or array is encrypted whole. Validate the cleartext first.
 * A cipher error propagates: do not publish that message.
 *
 * @example
 * ```ts
 * const schema = { properties: { email: { type: 'string', 'x-gdpr-sensitive': 'email' } } };
 * const data = { order_id: 1042, email: 'alice@example.com' };
 * protect(data, schema, cipher);   // data.email is now a base64 string
 * unprotect(data, schema, cipher); // data.email is 'alice@example.com' again
 * ```
 */
export function protect(data: Record<string, unknown>, schema: unknown, cipher: Cipher): void {
  walk(data, schema, cipher, encryptLeaf);
}

/**
 * Decrypts, in place, every marked value of `data` — the consumer's inverse of
 * {@link protect}, run after decode and before the handler reads `data`. An
 * absent path is skipped; a non-string value (never protected) is left alone; a
 * string the cipher cannot open, or that opens to something other than JSON,
 * throws {@link DecryptError} (fail the message: retry / dead-letter).
 */
export function unprotect(data: Record<string, unknown>, schema: unknown, cipher: Cipher): void {
  walk(data, schema, cipher, decryptLeaf);
}

function walk(data: unknown, schema: unknown, cipher: Cipher, leaf: Leaf): void {
  if (data === null || data === undefined || schema === null || schema === undefined) return;
  const paths = sensitivePaths(schema).map((p) => p.path);
  for (const path of paths) {
    // A marked container is encrypted whole; marks inside it are covered by it.
    if (path === '' || paths.some((outer) => outer !== '' && outer !== path && covers(outer, path))) continue;
    apply(data, segments(path), cipher, leaf);
  }
}

function covers(outer: string, path: string): boolean {
  return path.startsWith(`${outer}.`) || path.startsWith(`${outer}[]`);
}

interface Segment {
  readonly key: string;
  readonly each: boolean;
}

/** `addresses[].line` → `addresses` (each element), then `line`. */
function segments(path: string): Segment[] {
  return path.split('.').map((part) =>
    part.length >= 2 && part.endsWith('[]') ? { key: part.slice(0, -2), each: true } : { key: part, each: false });
}

function apply(node: unknown, path: Segment[], cipher: Cipher, leaf: Leaf): void {
  const [head, ...rest] = path;
  if (head === undefined || !isObject(node) || !Object.hasOwn(node, head.key)) return;
  const child = node[head.key];
  if (head.each) {
    if (!Array.isArray(child)) return;
    child.forEach((element, i) => {
      if (rest.length > 0) return apply(element, rest, cipher, leaf);
      const done = leaf(element, cipher);
      if (done !== undefined) child[i] = done.value;
    });
    return;
  }
  if (rest.length > 0) return apply(child, rest, cipher, leaf);
  const done = leaf(child, cipher);
  if (done !== undefined) node[head.key] = done.value;
}

function encryptLeaf(value: unknown, cipher: Cipher): { value: unknown } | undefined {
  if (value === undefined) return undefined;
  return { value: cipher.encrypt(Buffer.from(canonicalJson(value), 'utf8')) };
}

function decryptLeaf(value: unknown, cipher: Cipher): { value: unknown } | undefined {
  if (typeof value !== 'string') return undefined;
  let plaintext: Uint8Array;
  try {
    plaintext = cipher.decrypt(value);
  } catch (error) {
    if (error instanceof DecryptError) throw error;
    throw new DecryptError(`cannot decrypt a protected field: ${(error as Error)?.message ?? String(error)}`, { cause: error });
  }
  try {
    return { value: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(plaintext)) };
  } catch (error) {
    throw new DecryptError('the decrypted field is not JSON', { cause: error });
  }
}

/** JSON with object keys sorted at every level, no spaces: one encoding per value. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError(`a ${typeof value} value cannot be protected: it is not JSON`);
  return text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
