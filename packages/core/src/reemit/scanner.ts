import { NotAJsonObjectError } from '../envelope/errors.js';

/** One top-level member of a JSON object, as offsets into the text. */
export interface MemberSpan {
  /** The decoded key. */
  readonly key: string;
  /** Offset of the key's opening quote. */
  readonly keyStart: number;
  /** Offset of the value's first character. */
  readonly valueStart: number;
  /** Offset just past the value. */
  readonly valueEnd: number;
}

/** The top-level layout of a JSON object text. */
export interface ObjectLayout {
  /** Offset of the opening brace. */
  readonly open: number;
  /** Offset of the closing brace. */
  readonly close: number;
  readonly members: readonly MemberSpan[];
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

const SCALAR = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)$/;

/**
 * Finds the top-level members of a JSON object without parsing its values:
 * strings are skipped (escapes honoured) and nested objects and arrays are
 * bracket-matched, so a key inside a string or a nested value is never taken
 * for a top-level one. The top-level structure and scalar tokens are checked;
 * nested content is carried verbatim by the callers. Works on a JS string or
 * on the latin1 view of UTF-8 bytes (every structural character is ASCII).
 * Throws {@link NotAJsonObjectError}.
 */
export function scanObject(text: string): ObjectLayout {
  let i = skipWs(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACE) fail(text, i, 'expected "{"');
  const open = i;
  const members: MemberSpan[] = [];
  i = skipWs(text, i + 1);
  if (text.charCodeAt(i) !== CLOSE_BRACE) {
    for (;;) {
      if (text.charCodeAt(i) !== QUOTE) fail(text, i, 'expected a member name');
      const keyStart = i;
      const keyEnd = skipString(text, i);
      const key = memberName(text, keyStart, keyEnd);
      i = skipWs(text, keyEnd);
      if (text.charCodeAt(i) !== COLON) fail(text, i, 'expected ":"');
      const valueStart = skipWs(text, i + 1);
      const valueEnd = skipValue(text, valueStart);
      members.push({ key, keyStart, valueStart, valueEnd });
      i = skipWs(text, valueEnd);
      const c = text.charCodeAt(i);
      if (c === COMMA) {
        i = skipWs(text, i + 1);
        continue;
      }
      if (c === CLOSE_BRACE) break;
      fail(text, i, 'expected "," or "}"');
    }
  }
  const close = i;
  const end = skipWs(text, close + 1);
  if (end !== text.length) fail(text, end, 'unexpected content after the object');
  return { open, close, members };
}

/** The decoded name of the member whose quoted key spans `[start, end)`. */
function memberName(text: string, start: number, end: number): string {
  const raw = text.slice(start + 1, end - 1);
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(text.slice(start, end)) as string;
  } catch {
    return fail(text, start, 'invalid member name');
  }
}

/** Offset past the string whose opening quote is at `start`. */
function skipString(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q === -1) fail(text, start, 'unterminated string');
    let backslashes = 0;
    for (let k = q - 1; text.charCodeAt(k) === BACKSLASH; k--) backslashes++;
    if ((backslashes & 1) === 0) return q + 1;
    from = q + 1;
  }
}

/** Offset past the JSON value starting at `start`. */
function skipValue(text: string, start: number): number {
  const c = text.charCodeAt(start);
  if (c === QUOTE) return skipString(text, start);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) return skipContainer(text, start);
  let j = start;
  for (; j < text.length; j++) {
    const d = text.charCodeAt(j);
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isWs(d)) break;
  }
  if (!SCALAR.test(text.slice(start, j))) fail(text, start, 'invalid value');
  return j;
}

/** Offset past the object or array opening at `start`, matching brackets and skipping strings. */
function skipContainer(text: string, start: number): number {
  const closers: number[] = [];
  for (let j = start; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === QUOTE) {
      j = skipString(text, j) - 1;
    } else if (c === OPEN_BRACE) {
      closers.push(CLOSE_BRACE);
    } else if (c === OPEN_BRACKET) {
      closers.push(CLOSE_BRACKET);
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (closers.pop() !== c) fail(text, j, 'mismatched bracket');
      if (closers.length === 0) return j + 1;
    }
  }
  return fail(text, start, 'unterminated object or array');
}

function skipWs(text: string, i: number): number {
  while (isWs(text.charCodeAt(i))) i++;
  return i;
}

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function fail(text: string, offset: number, detail: string): never {
  throw new NotAJsonObjectError(offset >= text.length ? `${detail} (end of input)` : detail, offset);
}
