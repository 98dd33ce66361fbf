import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** An action the journal found unfinished at start-up. */
export interface InterruptedAction {
  readonly dlq: string;
  readonly action: string;
  /** ms UTC. */
  readonly started_at: number;
  /** Records whose copy reached their target while the DLQ may still hold them (redrive). */
  readonly sent: string[];
  /** Records written back to the tail of the DLQ while the original may still be there too (take-and-restore). */
  readonly restored: string[];
  /** Copies whose write to `queue` had begun (a `sent` line follows once it is done). */
  readonly sending: { readonly hash: string; readonly queue: string }[];
  /** Of the `sent` records, those whose original was then settled off the DLQ (the same fingerprint as in `sent`). */
  readonly left: string[];
  /** When the journal was last written (ms UTC): about when the action stopped. */
  readonly last_write: number;
}

/**
 * A journal of the action running on each DLQ, one file per broker and DLQ:
 * a line when the action starts, a `sending` line (with the target queue)
 * before each write of a copy to another queue, a line after every write that puts a
 * record in a second place (`sent`: its reset copy on the target; `restored`:
 * a copy written back to the DLQ) before the original leaves the DLQ, and a
 * line once a sent record's original was settled off the DLQ (`left`, named
 * by its copy's fingerprint as in `sent`). The file
 * goes when the action ends without an error. A process killed in between, or
 * an action stopped by a broker error, leaves it, and the next start reports
 * the records that may be in two places ({@link InterruptedAction}); whether
 * each still is, the DLQ itself says (its original was acknowledged or not).
 * Lines are appended synchronously, each before the next broker operation.
 */
export class Journal {
  constructor(private readonly dir: string, private readonly target: string) {}

  /** The interrupted action of `dlq`, if its journal is there. */
  interrupted(dlq: string): InterruptedAction | undefined {
    const file = this.file(dlq);
    if (!existsSync(file)) return undefined;
    let head: { action?: string; started_at?: number } = {};
    const sent: string[] = [];
    const restored: string[] = [];
    const left: string[] = [];
    const sending: { hash: string; queue: string }[] = [];
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line === '') continue;
      let entry: { t?: string; h?: string; q?: string; action?: string; started_at?: number };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        continue; // a line cut by the kill itself
      }
      if (entry.t === 'begin') head = entry;
      else if (entry.t === 'sent' && typeof entry.h === 'string') sent.push(entry.h);
      else if (entry.t === 'restored' && typeof entry.h === 'string') restored.push(entry.h);
      else if (entry.t === 'left' && typeof entry.h === 'string') left.push(entry.h);
      else if (entry.t === 'sending' && typeof entry.h === 'string' && typeof entry.q === 'string') sending.push({ hash: entry.h, queue: entry.q });
    }
    return { dlq, action: head.action ?? 'unknown', started_at: head.started_at ?? 0, sent, restored, left, sending, last_write: statSync(file).mtimeMs };
  }

  begin(dlq: string, action: string): void {
    mkdirSync(this.dir, { recursive: true });
    rmSync(this.file(dlq), { force: true });
    this.append(dlq, { t: 'begin', action, started_at: Date.now(), dlq, broker: this.target });
  }

  /** Before this call returns, the line is written: a kill after it leaves it on disk. */
  mark(dlq: string, kind: 'sending' | 'sent' | 'restored' | 'left', hash: string, queue?: string): void {
    this.append(dlq, { t: kind, h: hash, ...(queue !== undefined ? { q: queue } : {}) });
  }

  /** The action ended and nothing is on both sides: the journal goes. */
  end(dlq: string): void {
    rmSync(this.file(dlq), { force: true });
  }

  private append(dlq: string, entry: Record<string, unknown>): void {
    appendFileSync(this.file(dlq), `${JSON.stringify(entry)}\n`);
  }

  private file(dlq: string): string {
    return join(this.dir, `${createHash('sha256').update(`${this.target}\n${dlq}`).digest('hex').slice(0, 24)}.jsonl`);
  }
}
