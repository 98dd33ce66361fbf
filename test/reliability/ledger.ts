import { closeSync, existsSync, openSync, readSync, readdirSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The ledger: what the workers did, one line per event, one append-only file
 * per worker process (`<dir>/<worker>.ledger`). A line is written with one
 * write(2) before the step it records returns, so a SIGKILL leaves whole lines:
 * a line is there only if its step happened.
 *
 *   B <key> <attempt> <ms>    a handler began
 *   H <key> <attempt> <ms>    the handler's effect happened (the message was handled)
 *   F <key> <attempt> <ms>    the handler failed as its script says
 *   S <key> <decision> <ms>   the settlement resolved (ack, retry, dead-letter, …)
 *   K - <point> <ms>          the worker is about to SIGKILL itself at a kill point
 *
 * `key` is the message's own key (`data.k`) or, for fuzzed bodies, the SHA-1
 * of the body.
 */
export type LedgerKind = 'B' | 'H' | 'F' | 'S' | 'K';

export interface LedgerEvent {
  readonly kind: LedgerKind;
  readonly key: string;
  /** The attempt (B, H, F), the decision kind (S) or the kill point (K). */
  readonly detail: string;
  readonly at: number;
  readonly worker: string;
}

/** The write side, in a worker. */
export class LedgerWriter {
  private readonly fd: number;

  constructor(dir: string, worker: string) {
    this.fd = openSync(join(dir, `${worker}.ledger`), 'a');
  }

  write(kind: LedgerKind, key: string, detail: string | number): void {
    writeSync(this.fd, `${kind} ${key} ${detail} ${Date.now()}\n`);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** The read side, in the controller: follows every worker's file as it grows. */
export class LedgerReader {
  private readonly offsets = new Map<string, number>();
  private readonly partial = new Map<string, string>();

  constructor(private readonly dir: string) {}

  /** The events appended since the last call, file by file. */
  poll(): LedgerEvent[] {
    if (!existsSync(this.dir)) return [];
    const events: LedgerEvent[] = [];
    for (const name of readdirSync(this.dir).sort()) {
      if (!name.endsWith('.ledger')) continue;
      const worker = name.slice(0, -'.ledger'.length);
      const text = this.readNew(join(this.dir, name));
      if (text === '') continue;
      const lines = ((this.partial.get(name) ?? '') + text).split('\n');
      this.partial.set(name, lines.pop()!);
      for (const line of lines) events.push(parse(line, worker));
    }
    return events;
  }

  private readNew(path: string): string {
    let offset = this.offsets.get(path) ?? 0;
    // Most files (killed workers') never grow again: a stat, not a read, per poll.
    if (statSync(path).size <= offset) return '';
    const fd = openSync(path, 'r');
    try {
      const chunks: Buffer[] = [];
      const buffer = Buffer.allocUnsafe(1 << 16);
      for (;;) {
        const n = readSync(fd, buffer, 0, buffer.length, offset);
        if (n === 0) break;
        chunks.push(Buffer.from(buffer.subarray(0, n)));
        offset += n;
      }
      this.offsets.set(path, offset);
      return Buffer.concat(chunks).toString('utf8');
    } finally {
      closeSync(fd);
    }
  }
}

function parse(line: string, worker: string): LedgerEvent {
  const [kind, key, detail, at] = line.split(' ');
  if (kind !== 'B' && kind !== 'H' && kind !== 'F' && kind !== 'S' && kind !== 'K') throw new Error(`ledger of ${worker}: bad line ${JSON.stringify(line)}`);
  return { kind, key: key!, detail: detail!, at: Number(at), worker };
}
