import { InvalidMessageError } from './errors.js';
import type { JsonObject } from './types.js';

/** RFC 6901 escaping of one reference token. */
export function pointerToken(key: string): string {
  return key.includes('~') || key.includes('/') ? key.replace(/~/g, '~0').replace(/\//g, '~1') : key;
}

/**
 * Asserts that `value` is a plain JSON object whose every value JSON carries
 * faithfully, so `JSON.stringify` can neither drop nor alter anything.
 * Throws {@link InvalidMessageError} naming the JSON pointer of the first bad
 * value (`pointer` is where `value` itself sits, e.g. `/data`).
 */
export function assertJsonObject(value: unknown, pointer: string): asserts value is JsonObject {
  if (!isPlainObject(value)) throw new InvalidMessageError(pointer, `must be a plain JSON object, got ${describe(value)}`);
  const path: (string | number)[] = [];
  const problem = checkValue(value, path, []);
  if (problem !== undefined) {
    throw new InvalidMessageError(pointer + path.map((token) => `/${pointerToken(String(token))}`).join(''), problem);
  }
}

/**
 * The problem with `value`, or undefined. On a problem `path` is left holding
 * the keys down to the bad value (the pointer is only built then).
 */
function checkValue(value: unknown, path: (string | number)[], ancestors: object[]): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : `${String(value)} cannot be carried by JSON`;
    case 'object':
      if (value === null) return undefined;
      break;
    default:
      return `${describe(value)} cannot be carried by JSON`;
  }
  if (ancestors.includes(value)) return 'circular reference';
  ancestors.push(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      if (!(i in value)) return 'array hole (undefined) cannot be carried by JSON';
      const problem = checkValue(value[i], path, ancestors);
      if (problem !== undefined) return problem;
      path.pop();
    }
  } else if (isPlainObject(value)) {
    if (Object.getOwnPropertySymbols(value).length > 0) return 'symbol-keyed properties cannot be carried by JSON';
    for (const key in value) {
      path.push(key);
      const problem = checkValue(value[key], path, ancestors);
      if (problem !== undefined) return problem;
      path.pop();
    }
  } else {
    return `${describe(value)} is not plain JSON (use a string, number or plain object)`;
  }
  ancestors.pop();
  return undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') {
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === 'string' && name !== '' ? `a ${name} instance` : 'a non-plain object';
  }
  if (typeof value === 'bigint') return 'a BigInt';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  return String(value);
}
