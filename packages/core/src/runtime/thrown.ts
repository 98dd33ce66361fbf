/** Longest text a thrown non-Error is described with (log lines and DLQ records stay readable). */
const MAX_TEXT = 2000;

/**
 * The text of a thrown value, the same in a log line and in a DLQ record's
 * `dead_letter.error`: an Error's message; a string as it is; `null`,
 * `undefined`, numbers and booleans by name; an object as JSON text (never
 * "[object Object]"), with cycles and BigInts made printable.
 */
export function thrownText(thrown: unknown): string {
  if (thrown instanceof Error) return thrown.message;
  if (typeof thrown === 'string') return cut(thrown);
  if (thrown === null || typeof thrown !== 'object') {
    return typeof thrown === 'function' ? `[function ${thrown.name || 'anonymous'}]` : String(thrown);
  }
  return cut(jsonText(thrown));
}

/** The type name of a thrown Error (its `name`, or its class when `name` was left as "Error"); null otherwise. */
export function thrownType(thrown: unknown): string | null {
  if (!(thrown instanceof Error)) return null;
  const className = (thrown.constructor as { name?: unknown } | undefined)?.name;
  return thrown.name === 'Error' && typeof className === 'string' && className !== '' ? className : thrown.name;
}

/** Log fields for a thrown value: `error` ("Type: message"), the `stack`, and the `cause` chain. */
export function thrownFields(thrown: unknown): { error: string; stack?: string; cause?: string } {
  const fields: { error: string; stack?: string; cause?: string } = { error: oneLine(thrown) };
  if (thrown instanceof Error && typeof thrown.stack === 'string') fields.stack = thrown.stack;
  const causes: string[] = [];
  const seen = new Set<unknown>([thrown]);
  let next = thrown instanceof Error ? thrown.cause : undefined;
  while (next !== undefined && !seen.has(next) && causes.length < 10) {
    seen.add(next);
    causes.push(oneLine(next));
    next = next instanceof Error ? next.cause : undefined;
  }
  if (causes.length > 0) fields.cause = causes.join(' <- ');
  return fields;
}

function oneLine(thrown: unknown): string {
  const type = thrownType(thrown);
  return type === null ? `thrown ${typeof thrown === 'string' ? 'string' : thrown === null ? 'null' : typeof thrown}: ${thrownText(thrown)}` : `${type}: ${thrownText(thrown)}`;
}

function jsonText(value: object): string {
  const seen = new WeakSet<object>();
  try {
    const text = JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v === 'bigint') return v.toString();
      if (typeof v === 'object' && v !== null) {
        if (seen.has(v)) return '[Circular]';
        seen.add(v);
      }
      return v;
    });
    return text ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

function cut(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}… (${text.length} chars)` : text;
}
