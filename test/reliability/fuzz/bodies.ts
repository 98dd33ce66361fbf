import type { Rng } from '../rng.js';
import { FUZZ_URN } from '../scripts.js';

/**
 * How a fuzzed body must end, by the specification's rules (FACTS.md §2, the
 * consumer-side `accepts()` rules; seed 001 for poison), written here from
 * those rules rather than from the core's code, so the two are checked
 * against each other on every broker:
 *
 * - `handled`: an accepted envelope whose URN has a handler;
 * - `unknown_urn`: an accepted envelope whose URN has none (the workers run
 *   `onUnknownUrn: 'dead_letter'`, so it is on the DLQ with that reason);
 * - `poison`: anything else, on the DLQ as a poison record that keeps the
 *   original bytes.
 */
export type FuzzOutcome = 'handled' | 'unknown_urn' | 'poison';

export interface FuzzBody {
  readonly bytes: Buffer;
  /** What kind of damage it carries (the report's rows). */
  readonly category: FuzzCategory;
  /** The variant within the category, for a mismatch message. */
  readonly variant: string;
  readonly expected: FuzzOutcome;
  /** JSON nesting depth (the top-level value is 1; 0 when not JSON). */
  readonly depth: number;
  /** It holds a number literal beyond a double's range (1e400): JSON.parse reads ±Infinity. */
  readonly overflow: boolean;
}

export const FUZZ_CATEGORIES = [
  'valid',
  'invalid-utf8',
  'truncated',
  'deep-nesting',
  'huge-string',
  'wrong-type',
  'forbidden-key',
  'urn-alias',
  'duplicate-key',
  'bom',
  'big-number',
  'empty',
  'non-object',
  'garbage',
] as const;
export type FuzzCategory = (typeof FUZZ_CATEGORIES)[number];

/** How often each category comes up. */
const WEIGHTS: Readonly<Record<FuzzCategory, number>> = {
  valid: 5,
  'invalid-utf8': 10,
  truncated: 10,
  'deep-nesting': 5,
  'huge-string': 0.5,
  'wrong-type': 27.5,
  'forbidden-key': 7,
  'urn-alias': 6,
  'duplicate-key': 6,
  bom: 2,
  'big-number': 5,
  empty: 1,
  'non-object': 5,
  garbage: 10,
};

const OTHER_URN = 'urn:babel:reliability:nobody';

/**
 * Generates fuzzed bodies, deterministically from `rng`. `maxBytes` is the
 * largest body the broker carries; a huge body stays under it, and a poison
 * one under half of it, so its DLQ record fits too.
 */
export function* fuzzBodies(rng: Rng, count: number, maxBytes: number): Generator<FuzzBody> {
  for (let n = 0; n < count; n++) {
    const category = rng.weighted(WEIGHTS);
    yield GENERATORS[category](rng, n, maxBytes);
  }
}

type Generator_ = (rng: Rng, n: number, maxBytes: number) => FuzzBody;

/** A valid envelope as an object (members in the canonical order), unique by `n`. */
function envelope(rng: Rng, n: number, data: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    job: FUZZ_URN,
    trace_id: uuid(rng),
    data: { n, ...data },
    meta: { id: uuid(rng), queue: 'fuzz', lang: rng.pick(['node', 'php', 'go', 'python', 'java', 'dotnet']), schema_version: 1, created_at: 1_700_000_000_000 + n },
    attempts: 0,
  };
}

const body = (category: FuzzCategory, variant: string, text: string | Buffer, expected: FuzzOutcome, depth: number, overflow = false): FuzzBody => ({
  bytes: typeof text === 'string' ? Buffer.from(text, 'utf8') : text,
  category,
  variant,
  expected,
  depth,
  overflow,
});

const GENERATORS: Readonly<Record<FuzzCategory, Generator_>> = {
  valid(rng, n) {
    const env = envelope(rng, n, { text: rng.pick(['', 'Café ☕', '🚀', 'a\\"b', '\u2028', '\u0000']) });
    if (rng.int(4) === 0) return body('valid', 'pretty-printed', JSON.stringify(env, null, 2), 'handled', 3);
    return body('valid', 'compact', JSON.stringify(env), 'handled', 3);
  },

  'invalid-utf8'(rng, n) {
    const bad = rng.pick([
      ['lone continuation byte', [0x80]],
      ['overlong slash', [0xc0, 0xaf]],
      ['UTF-16 surrogate', [0xed, 0xa0, 0x80]],
      ['0xFF', [0xff]],
      ['truncated sequence', [0xe2, 0x82]],
      ['above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ] as const);
    const text = JSON.stringify(envelope(rng, n, { s: 'MARK' }));
    const at = text.indexOf('MARK');
    const bytes = Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(bad[1]), Buffer.from(text.slice(at + 4))]);
    return body('invalid-utf8', bad[0], bytes, 'poison', 3);
  },

  truncated(rng, n) {
    const text = Buffer.from(JSON.stringify(envelope(rng, n, { s: 'x'.repeat(rng.int(200)) })));
    // Any proper prefix of a compact JSON object is not JSON (its brace is never closed).
    return body('truncated', 'cut', text.subarray(0, rng.int(text.length)), 'poison', 0);
  },

  'deep-nesting'(rng, n, maxBytes) {
    // At most 6 bytes a level; the body (and its poison record) stays within the broker's limit.
    const ceiling = Math.min(50_000, Math.floor((maxBytes / 2 - 512) / 6));
    const depth = Math.min(ceiling, rng.pick([rng.between(2, 100), rng.between(100, 999), rng.between(1000, 5000), rng.between(5000, 50_000)]));
    const [open, close] = rng.int(2) === 0 ? ['[', ']'] : ['{"a":', '}'];
    const nested = `${open.repeat(depth)}${rng.int(2) === 0 ? '1' : 'null'}${close.repeat(depth)}`;
    const env = JSON.stringify(envelope(rng, n, { d: 'MARK' })).replace('"MARK"', nested);
    // The envelope and data objects add two levels.
    if (rng.int(4) === 0) return body('deep-nesting', 'without identity', env.replace(`"job":"${FUZZ_URN}",`, ''), 'poison', depth + 2);
    return body('deep-nesting', 'valid envelope', env, 'handled', depth + 2);
  },

  'huge-string'(rng, n, maxBytes) {
    const poison = rng.int(3) === 0;
    const ceiling = poison ? maxBytes / 2 : maxBytes - 4096;
    // Log-uniform between 64 KiB and the ceiling.
    const size = Math.floor(Math.exp(Math.log(65_536) + rng.next() * (Math.log(ceiling) - Math.log(65_536))));
    const unit = rng.pick(['x', 'é', '☕', '🚀', '\\"']);
    const s = unit.repeat(Math.max(1, Math.floor(size / Buffer.byteLength(unit))));
    const env = envelope(rng, n, { s: 'MARK' });
    if (poison) delete env.trace_id;
    const text = JSON.stringify(env).replace('"MARK"', `"${s}"`);
    return body('huge-string', poison ? 'without trace_id' : 'valid envelope', text, poison ? 'poison' : 'handled', 3);
  },

  'wrong-type'(rng, n) {
    const field = rng.pick(FIELDS);
    const [label, literal] = rng.pick(VALUES);
    const env = envelope(rng, n);
    const text = setField(JSON.stringify(env), env, field, literal);
    const outcome = literal === undefined ? ABSENT[field] : FIELD_RULES[field](JSON.parse(literal) as unknown, literal);
    return body('wrong-type', `${field} = ${label}`, text, outcome, 3);
  },

  'forbidden-key'(rng, n) {
    const env = envelope(rng, n);
    const meta = env.meta as Record<string, unknown>;
    const which = rng.pick(['timestamp', 'meta.max_retries', 'meta.attempts', 'meta.source', 'meta.ts', 'all five', '__proto__', 'constructor']);
    if (which === 'timestamp' || which === 'all five') env.timestamp = 1_700_000_000;
    if (which === 'all five') Object.assign(meta, { max_retries: 5, attempts: 2, source: 'php', ts: 1 });
    else if (which.startsWith('meta.')) meta[which.slice(5)] = rng.pick([1, 'x', null, {}]);
    let text = JSON.stringify(env);
    // JSON.parse makes "__proto__" an own member; the envelope must not change shape because of it.
    if (which === '__proto__' || which === 'constructor') text = text.replace('{', `{"${which}":{"job":"${OTHER_URN}","attempts":"x"},`);
    return body('forbidden-key', which, text, 'handled', 3);
  },

  'urn-alias'(rng, n) {
    const env = envelope(rng, n);
    const variants: [string, () => void, FuzzOutcome][] = [
      ['urn instead of job', () => { delete env.job; env.urn = FUZZ_URN; }, 'handled'],
      ['blank job, urn', () => { env.job = ' '; env.urn = FUZZ_URN; }, 'handled'],
      ['non-string job, urn', () => { env.job = 7; env.urn = FUZZ_URN; }, 'handled'],
      ['job wins over urn', () => { env.urn = OTHER_URN; }, 'handled'],
      ['job (no handler) wins over urn', () => { env.job = OTHER_URN; env.urn = FUZZ_URN; }, 'unknown_urn'],
      ['urn padded', () => { delete env.job; env.urn = `  ${FUZZ_URN}\t`; }, 'handled'],
      ['blank urn, no job', () => { delete env.job; env.urn = '  '; }, 'poison'],
      ['unknown urn', () => { delete env.job; env.urn = OTHER_URN; }, 'unknown_urn'],
    ];
    const [variant, apply, outcome] = rng.pick(variants);
    apply();
    return body('urn-alias', variant, JSON.stringify(env), outcome, 3);
  },

  'duplicate-key'(rng, n) {
    const env = envelope(rng, n);
    const text = JSON.stringify(env);
    const variants: [string, string, string, FuzzOutcome][] = [
      ['job: bad then good', `"job":"${FUZZ_URN}"`, `"job":7,"job":"${FUZZ_URN}"`, 'handled'],
      ['job: good then unknown', `"job":"${FUZZ_URN}"`, `"job":"${FUZZ_URN}","job":"${OTHER_URN}"`, 'unknown_urn'],
      ['job: good then blank', `"job":"${FUZZ_URN}"`, `"job":"${FUZZ_URN}","job":""`, 'poison'],
      ['attempts: string then 0', '"attempts":0', '"attempts":"x","attempts":0', 'handled'],
      ['attempts: 0 then 1.5', '"attempts":0', '"attempts":0,"attempts":1.5', 'poison'],
      ['schema_version: 2 then 1', '"schema_version":1', '"schema_version":2,"schema_version":1', 'handled'],
      ['data: object then list', `"data":{"n":${n}}`, `"data":{"n":${n}},"data":[${n}]`, 'poison'],
    ];
    const [variant, from, to, outcome] = rng.pick(variants);
    return body('duplicate-key', variant, text.replace(from, to), outcome, 3);
  },

  bom(rng, n) {
    const text = Buffer.from(JSON.stringify(envelope(rng, n)));
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    // Not canonical JSON: the Python and Go SDKs refuse it too.
    return rng.int(2) === 0
      ? body('bom', 'UTF-8 BOM', Buffer.concat([bom, text]), 'poison', 3)
      : body('bom', 'BOM twice', Buffer.concat([bom, bom, text]), 'poison', 3);
  },

  'big-number'(rng, n) {
    const literal = rng.pick(['9007199254740993', '-9007199254740993', '12345678901234567890123', '1e308', '1e400', '-1e400', '0.1e-400', '123456789.123456789123456789']);
    const where = rng.pick(['data', 'attempts', 'meta.created_at']);
    const env = envelope(rng, n, { big: 0 });
    let text = JSON.stringify(env);
    let outcome: FuzzOutcome = 'handled';
    if (where === 'data') text = text.replace('"big":0', `"big":${literal}`);
    else if (where === 'meta.created_at') text = text.replace(/"created_at":\d+/, `"created_at":${literal}`);
    else {
      text = text.replace('"attempts":0', `"attempts":${literal}`);
      outcome = Number.isInteger(Number(literal)) ? 'handled' : 'poison';
    }
    return body('big-number', `${where} = ${literal}`, text, outcome, 3, !Number.isFinite(Number(literal)));
  },

  empty() {
    return body('empty', 'empty body', '', 'poison', 0);
  },

  'non-object'(rng) {
    const literal = rng.pick(['[]', '[1,2]', `[${JSON.stringify({ job: FUZZ_URN })}]`, '"text"', '123', 'true', 'null', '1e400', ' ', '{}']);
    // `{}` is an object, but with no identity: poison all the same.
    return body('non-object', literal.trim() === '' ? 'whitespace' : literal, literal, 'poison', literal.startsWith('[') || literal === '{}' ? 1 : 0);
  },

  garbage(rng) {
    for (;;) {
      const bytes = Buffer.from(Array.from({ length: rng.between(1, 200) }, () => (rng.int(4) === 0 ? rng.pick([0x7b, 0x7d, 0x22, 0x3a, 0x2c]) : rng.int(256))));
      if (!isJsonObject(bytes)) return body('garbage', 'random bytes', bytes, 'poison', 0);
    }
  },
};

/** The envelope fields the wrong-type category damages. */
const FIELDS = ['job', 'trace_id', 'data', 'meta', 'meta.schema_version', 'meta.id', 'meta.queue', 'meta.lang', 'meta.created_at', 'attempts'] as const;
type Field = (typeof FIELDS)[number];

/** Values put in a field, as JSON literals (undefined: the member is removed). */
const VALUES: readonly (readonly [string, string | undefined])[] = [
  ['absent', undefined],
  ['null', 'null'],
  ['true', 'true'],
  ['0', '0'],
  ['1', '1'],
  ['-1', '-1'],
  ['1.0', '1.0'],
  ['1.5', '1.5'],
  ['2', '2'],
  ['1e300', '1e300'],
  ['""', '""'],
  ['" "', '" "'],
  ['"x"', '"x"'],
  ['"1"', '"1"'],
  ['[]', '[]'],
  ['[1]', '[1]'],
  ['{}', '{}'],
  ['{"a":1}', '{"a":1}'],
];

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const nonBlank = (v: unknown) => typeof v === 'string' && v.trim() !== '';

/**
 * The outcome when one field holds `value` and the rest is valid, by the
 * accepts() rules: the URN (job, else the urn alias; non-blank after
 * trimming), meta an object with schema_version 1, data an object (an empty
 * list counts as {}), a non-blank trace_id, an integer attempts. Nothing else
 * is checked. JavaScript reads 1.0 as 1, so a TypeScript consumer accepts it
 * where schema_version or attempts must be the integer 1 (FACTS.md §2).
 */
const FIELD_RULES: Readonly<Record<Field, (value: unknown, literal: string) => FuzzOutcome>> = {
  job: (v) => (nonBlank(v) ? (String(v).trim() === FUZZ_URN ? 'handled' : 'unknown_urn') : 'poison'),
  trace_id: (v) => (nonBlank(v) ? 'handled' : 'poison'),
  data: (v) => (isObject(v) || (Array.isArray(v) && v.length === 0) ? 'handled' : 'poison'),
  meta: () => 'poison', // a meta without schema_version 1 (every value here) fails
  'meta.schema_version': (v) => (v === 1 ? 'handled' : 'poison'),
  'meta.id': () => 'handled',
  'meta.queue': () => 'handled',
  'meta.lang': () => 'handled',
  'meta.created_at': () => 'handled',
  attempts: (v) => (Number.isInteger(v) ? 'handled' : 'poison'),
};

const ABSENT: Readonly<Record<Field, FuzzOutcome>> = {
  job: 'poison',
  trace_id: 'poison',
  data: 'poison',
  meta: 'poison',
  'meta.schema_version': 'poison',
  'meta.id': 'handled',
  'meta.queue': 'handled',
  'meta.lang': 'handled',
  'meta.created_at': 'handled',
  attempts: 'poison',
};

/** `text` (the compact encoding of `env`) with `field` set to a JSON literal, or removed. */
function setField(text: string, env: Record<string, unknown>, field: Field, literal: string | undefined): string {
  const [outer, inner] = field.split('.') as [string, string | undefined];
  const owner = inner === undefined ? env : (env.meta as Record<string, unknown>);
  const key = inner ?? outer;
  const current = `"${key}":${JSON.stringify(owner[key])}`;
  if (!text.includes(current)) throw new Error(`fuzz: ${field} not found in ${text}`);
  if (literal !== undefined) return text.replace(current, `"${key}":${literal}`);
  // Removing a member: take its comma with it (the one before, or after when it comes first).
  return text.includes(`,${current}`) ? text.replace(`,${current}`, '') : text.replace(`${current},`, '');
}

function isJsonObject(bytes: Buffer): boolean {
  try {
    return isObject(JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)));
  } catch {
    return false;
  }
}

function uuid(rng: Rng): string {
  const hex = Array.from({ length: 32 }, () => rng.int(16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
