import { decodeUtf8Strict } from './utf8.js';
import { warn } from './warnings.js';
import type { DecodedEnvelope, WarningHandler } from './types.js';

/** Top-level keys a decoder drops (with a warning): the envelope never carries them. */
export const FORBIDDEN_TOP_LEVEL_KEYS = ['timestamp'] as const;
/** `meta` keys a decoder drops (with a warning): `attempts` lives at the top level, the rest are not part of the contract. */
export const FORBIDDEN_META_KEYS = ['max_retries', 'attempts', 'source', 'ts'] as const;

/**
 * Tolerant decode (seed 002): malformed JSON, invalid UTF-8 or a non-object
 * top level gives `{}`; forbidden keys are removed with one warning each; a
 * non-empty list as `data` gives `{}` with a warning for `/data`; an empty
 * list as `data` (PHP's empty payload) becomes `{}`.
 */
export function decodeEnvelope(raw: string | Uint8Array, onWarning?: WarningHandler): DecodedEnvelope {
  const text = typeof raw === 'string' ? raw : decodeUtf8Strict(raw);
  if (text === null) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {};
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  const env = value as Record<string, unknown>;

  const data = env.data;
  if (Array.isArray(data)) {
    if (data.length > 0) {
      warn(onWarning, 'BabelQueue decode: "data" is a non-empty JSON list, not an object; message rejected', '/data');
      return {};
    }
    env.data = {};
  }
  for (const key of FORBIDDEN_TOP_LEVEL_KEYS) {
    if (Object.hasOwn(env, key)) dropForbidden(env, key, `/${key}`, onWarning);
  }
  const meta = env.meta;
  if (meta !== null && typeof meta === 'object' && !Array.isArray(meta)) {
    for (const key of FORBIDDEN_META_KEYS) {
      if (Object.hasOwn(meta, key)) dropForbidden(meta as Record<string, unknown>, key, `/meta/${key}`, onWarning);
    }
  }
  return env;
}

function dropForbidden(obj: Record<string, unknown>, key: string, pointer: string, onWarning?: WarningHandler): void {
  delete obj[key];
  warn(onWarning, `BabelQueue decode: forbidden key dropped at ${pointer}`, pointer);
}
