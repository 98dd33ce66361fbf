import { InvalidMessageError } from './errors.js';
import type { JsonObject } from './types.js';

/** RFC 6901 escaping of one reference token. */
export function pointerToken(key: string): string {
  return key.includes('~') || key.includes('/') ? key.replace(/~/g, '~0').replace(/\//g, '~1') : key;
}

/**
 * Asserts that `value` is a plain JSON object whose every value JSON carries
 * faithfully, so `JSON.stringify` can neither drop nor alter anything.
 * Throws {@link InvalidMessageError} naming the JSON pointer of the first bad value.
 */
export function assertJsonObject(value: unknown, pointer: string): asserts value is JsonObject {
  if (!isPlainObject(value)) throw new InvalidMessageError(pointer, `must be a plain JSON object, got ${describe(value)}`);
  checkValue(value, pointer, []);
}

function checkValue(value: unknown, pointer: string, ancestors: object[]): void {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new InvalidMessageError(pointer, `${String(value)} cannot be carried by JSON`);
      return;
    case 'object':
      if (value === null) return;
      break;
    default:
      throw new InvalidMessageError(pointer, `${describe(value)} cannot be carried by JSON`);
  }
  if (ancestors.includes(value)) throw new InvalidMessageError(pointer, 'circular reference');
  ancestors.push(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) throw new InvalidMessageError(`${pointer}/${i}`, 'array hole (undefined) cannot be carried by JSON');
      checkValue(value[i], `${pointer}/${i}`, ancestors);
    }
  } else if (isPlainObject(value)) {
    if (Object.getOwnPropertySymbols(value).length > 0) {
      throw new InvalidMessageError(pointer, 'symbol-keyed properties cannot be carried by JSON');
    }
    for (const key of Object.keys(value)) {
      checkValue((value as Record<string, unknown>)[key], `${pointer}/${pointerToken(key)}`, ancestors);
    }
  } else {
    throw new InvalidMessageError(pointer, `${describe(value)} is not plain JSON (use a string, number or plain object)`);
  }
  ancestors.pop();
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
