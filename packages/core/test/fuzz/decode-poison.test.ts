import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  EnvelopeCodec,
  deadLetterBlock,
  isValidUtf8,
  poisonRecord,
  withAttempts,
  withDeadLetter,
  withoutDeadLetter,
  type JsonObject,
} from '@babelqueue/core';

// Deterministic: the same seed gives the same bodies on every run. 30k keep every path
// in volume (each above 1000) while the file stays far inside the runner's timeout
// on a busy 2-core machine under coverage (100k took 100-180 s there).
const SEED = 0x5eed_b0dd;
const BODIES = 30_000;

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rand = mulberry32(SEED);
const int = (n: number) => Math.floor(rand() * n);
const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;

const KEYS = ['job', 'urn', 'trace_id', 'data', 'meta', 'attempts', 'dead_letter', 'timestamp', 'attempts', 'x', '10', '2', 'é', 'a"b', 'a\\b'];
const STRINGS = ['', ' ', 'urn:babel:orders:created', 'Café ☕', '🚀', '"attempts":1', '\\', '\n', '\u2028', 'a/b', '<&>', '\u0000'];
const NUMBERS = ['0', '1', '-1', '1.0', '2.5e3', '12345678901234567890', '1e400', '-0', '0.1'];

function randomJson(depth: number): string {
  switch (depth > 3 ? int(4) : int(7)) {
    case 0:
      return pick(NUMBERS);
    case 1:
      return JSON.stringify(pick(STRINGS));
    case 2:
      return pick(['true', 'false', 'null']);
    case 3:
      return pick(['{}', '[]', '""']);
    case 4:
      return `[${Array.from({ length: int(4) }, () => randomJson(depth + 1)).join(',')}]`;
    default:
      return `{${Array.from({ length: int(5) }, () => `${JSON.stringify(pick(KEYS))}:${randomJson(depth + 1)}`).join(',')}}`;
  }
}

/** The data with non-finite numbers (from 1e400) replaced, since make() refuses them. */
function safe(value: JsonObject): JsonObject {
  return JSON.parse(JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? 0 : v))) as JsonObject;
}

function validEnvelope(): string {
  const data = JSON.parse(`{"v":${randomJson(1)}}`) as JsonObject;
  const env = EnvelopeCodec.make(pick(['urn:babel:orders:created', ' urn:babel:a:b ', 'urn:x']), safe(data), {
    queue: pick(['orders', 'default', 'q.fifo']),
  });
  env.attempts = int(6);
  const body = EnvelopeCodec.encode(env);
  switch (int(5)) {
    case 0:
      return JSON.stringify(JSON.parse(body), null, pick([1, 2, 4, '\t']));
    case 1:
      return body.replace('"job":', '"urn":');
    case 2:
      return body.replace(/}$/, `,"x_extra":${randomJson(1)}}`);
    default:
      return body;
  }
}

function mutate(body: Buffer): Buffer {
  const out = Buffer.from(body);
  const at = int(Math.max(1, out.length));
  switch (int(8)) {
    case 0:
      out[at] = int(256);
      return out;
    case 1:
      return Buffer.concat([out.subarray(0, at), Buffer.from([int(256)]), out.subarray(at)]);
    case 2:
      return Buffer.concat([out.subarray(0, at), out.subarray(Math.min(out.length, at + 1 + int(8)))]);
    case 3:
      return out.subarray(0, at);
    case 4:
      return Buffer.concat([out.subarray(0, at), Buffer.from(pick(['"', '\\', '{', '}', '[', ']', ',', ':', '"attempts":', ' ', 'é', '\u2028'])), out.subarray(at)]);
    case 5:
      return Buffer.from(out.toString('utf8').replace(/"attempts":\d+/, `"attempts":${randomJson(2)}`));
    case 6:
      return Buffer.from(out.toString('utf8').replace('"data":{', `"data":${randomJson(2)},"_":{`));
    default:
      return Buffer.concat([out, out.subarray(0, at)]);
  }
}

function randomBody(): Buffer {
  switch (int(6)) {
    case 0:
      return Buffer.from(Array.from({ length: int(48) }, () => int(256)));
    case 1:
      return Buffer.from(randomJson(0));
    case 2:
      return Buffer.from(validEnvelope());
    default:
      return mutate(Buffer.from(validEnvelope()));
  }
}

const OPTIONS = { originalQueue: 'orders', attempts: 1, error: 'poison', exception: null, failedAt: 1 };
const BLOCK = deadLetterBlock({ reason: 'failed', originalQueue: 'orders', attempts: 3, failedAt: 2 });

function isJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Every body ends as an accepted envelope or as a poison record that keeps the original. */
function settle(body: Buffer): 'envelope' | 'object' | 'raw' | 'base64' {
  const env = EnvelopeCodec.decode(body, () => {});
  if (EnvelopeCodec.accepts(env)) {
    const original = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    const retry = JSON.parse(withAttempts(body, env.attempts + 1).toString('utf8')) as Record<string, unknown>;
    assert.equal(JSON.stringify(retry), JSON.stringify({ ...original, attempts: env.attempts + 1 }));
    const record = withDeadLetter(body, BLOCK);
    assert.deepEqual((JSON.parse(record.toString('utf8')) as Record<string, unknown>).dead_letter, BLOCK);
    return 'envelope';
  }
  const record = poisonRecord(body, OPTIONS);
  const parsed = JSON.parse(record.toString('utf8')) as Record<string, unknown>;
  assert.equal((parsed.dead_letter as { reason: string }).reason, 'poison');
  if (!isValidUtf8(body)) {
    assert.deepEqual(Object.keys(parsed), ['raw', 'raw_encoding', 'dead_letter']);
    assert.equal(parsed.raw_encoding, 'base64');
    assert.deepEqual(Buffer.from(parsed.raw as string, 'base64'), body);
    return 'base64';
  }
  const text = body.toString('utf8');
  const object = isJsonObject(text);
  if (object === undefined) {
    assert.deepEqual(Object.keys(parsed), ['raw', 'dead_letter']);
    assert.equal(parsed.raw, text);
    return 'raw';
  }
  const { dead_letter: _dropped, ...members } = parsed;
  const { dead_letter: _old, ...originalMembers } = object;
  // Same members, same order (JSON.stringify of both follows member order).
  assert.equal(JSON.stringify(members), JSON.stringify(originalMembers));
  if (!('dead_letter' in object)) assert.deepEqual(withoutDeadLetter(record), body);
  return 'object';
}

test(`fuzz: ${BODIES} random and mutated bodies through decode and poison handling`, () => {
  const outcomes = { envelope: 0, object: 0, raw: 0, base64: 0 };
  // Most mutated bodies make JSON.parse throw; stack traces would dominate the run time.
  const { stackTraceLimit } = Error;
  Error.stackTraceLimit = 0;
  let failure: { index: number; body: Buffer; error: unknown } | undefined;
  for (let i = 0; i < BODIES && failure === undefined; i++) {
    const body = randomBody();
    try {
      outcomes[settle(body)]++;
    } catch (error) {
      failure = { index: i, body, error };
    }
  }
  Error.stackTraceLimit = stackTraceLimit;
  if (failure !== undefined) {
    assert.fail(`body #${failure.index} (base64 ${failure.body.toString('base64')}): ${String(failure.error)}`);
  }
  // Every path was exercised in volume.
  for (const [path, count] of Object.entries(outcomes)) assert.ok(count > 1000, `${path}: ${count}`);
});
