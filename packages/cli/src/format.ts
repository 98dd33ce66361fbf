/** One compact JSON document and a newline (the `--json` output unit). */
export function jsonLine(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

/** Left-aligned columns, two spaces apart, for human-readable tables. */
export function columns(rows: readonly (readonly string[])[], indent = ''): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) => indent + row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ').trimEnd())
    .join('\n') + (rows.length > 0 ? '\n' : '');
}

/** A body as a JSON value when it is valid UTF-8 JSON; undefined otherwise. */
export function parseBody(body: Buffer): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body)) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * A body as one line of JSON text, byte-faithful: a JSON body keeps its own
 * spelling (big integers, `1.0`, key order) with only its insignificant
 * line breaks turned into spaces; anything else is wrapped as
 * `{"raw": "<base64>", "raw_encoding": "base64"}`.
 */
export function bodyLine(body: Buffer): string {
  if (parseBody(body) !== undefined) return body.toString('utf8').replace(/[\r\n]+/g, ' ');
  return JSON.stringify({ raw: body.toString('base64'), raw_encoding: 'base64' });
}

/** A field of a JSON object by dotted path, as display text ("" when absent). */
export function field(value: unknown, path: string): string {
  let at: unknown = value;
  for (const key of path.split('.')) {
    if (at === null || typeof at !== 'object' || Array.isArray(at)) return '';
    at = (at as Record<string, unknown>)[key];
  }
  if (at === undefined) return '';
  return typeof at === 'string' ? at : JSON.stringify(at);
}

/** Text shortened to `max` characters with an ellipsis. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * Re-indents JSON text without parsing its values, so numbers such as
 * 12345678901234567890 or 1.0 print exactly as they were sent. The input
 * must be valid JSON.
 */
export function prettyJson(text: string, indent = '  '): string {
  let out = '';
  let depth = 0;
  let inString = false;
  const newline = () => `\n${indent.repeat(depth)}`;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (inString) {
      out += ch;
      if (ch === '\\') out += text[++i] ?? '';
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === ' ' || ch === '\n' || ch === '\r' || ch === '\t') continue;
    if (ch === '"') {
      inString = true;
      out += ch;
    } else if (ch === '{' || ch === '[') {
      const close = ch === '{' ? '}' : ']';
      let j = i + 1;
      while (j < text.length && ' \n\r\t'.includes(text[j] as string)) j++;
      if (text[j] === close) {
        out += ch + close;
        i = j;
      } else {
        depth++;
        out += ch + newline();
      }
    } else if (ch === '}' || ch === ']') {
      depth--;
      out += newline() + ch;
    } else if (ch === ',') {
      out += `,${newline()}`;
    } else if (ch === ':') {
      out += ': ';
    } else {
      out += ch;
    }
  }
  return out;
}
