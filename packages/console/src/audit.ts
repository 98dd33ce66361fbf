import { createHash } from 'node:crypto';
import { appendFileSync, closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from '@babelqueue/core';
import type { ActionResult } from './actions.js';

/** Who asked for an action. */
export interface AuditActor {
  /** The client's address as the socket saw it. */
  readonly address: string | null;
  /** The basic-auth user; null with a token or no authentication (`auth` says which). */
  readonly user: string | null;
  readonly auth: 'none' | 'token' | 'basic';
}

/** One line of the audit trail: an action that wrote to a broker, and what it did. */
export interface AuditEntry {
  /** ISO 8601 UTC. */
  readonly at: string;
  readonly action: string;
  readonly dlq: string;
  readonly broker: string;
  readonly who: AuditActor;
  /** The filter of a bulk redrive ("all" for every record); null for chosen records. */
  readonly filter: Record<string, unknown> | 'all' | null;
  /** `to` of a redrive, or "each its own queue"; null for delete and purge. */
  readonly target: string | null;
  readonly counts: { readonly redriven: number; readonly deleted: number; readonly kept: number; readonly not_found: number };
  /** The records it touched (`meta.id`, else the body's fingerprint), when at most {@link IDS_LISTED}. */
  readonly records?: readonly string[];
  /** Over {@link IDS_LISTED} records: how many, and the SHA-256 of their ids joined by newlines. */
  readonly digest?: { readonly count: number; readonly sha256: string };
  /** An edit and redrive: the fingerprint of the stored record and of the copy sent. */
  readonly edit?: { readonly from: string; readonly sent: string };
  readonly error?: string;
  readonly note?: string;
}

/** Ids listed in an entry; past this, a digest. */
export const IDS_LISTED = 50;

/** The page reads at most this much of the end of the file. */
const TAIL_BYTES = 4 * 1024 * 1024;

/** Entries kept in memory for the page. */
const KEPT = 500;

/**
 * The console's audit trail: every redrive, delete, purge and recovery is
 * logged at info (`console: audit`, never a body), kept in memory for the
 * Audit page, and, with `file`, appended to it as one JSON line each, written
 * before the API answers. The page reads the file when there is one, so it
 * shows the actions of earlier runs too.
 */
export class AuditTrail {
  private readonly recent: AuditEntry[] = [];

  constructor(private readonly logger: Logger, private readonly file: string | undefined) {
    if (file !== undefined) mkdirSync(dirname(file), { recursive: true });
  }

  /** Records an action's outcome (the counts and ids come from its result). */
  note(action: string, result: Partial<ActionResult> & { readonly dlq: string; readonly edit?: AuditEntry['edit'] }, who: AuditActor, broker: string, request: { filter?: AuditEntry['filter']; target?: string | null }): AuditEntry {
    const counts = { redriven: result.redriven ?? 0, deleted: result.deleted ?? 0, kept: result.kept ?? 0, not_found: result.not_found ?? 0 };
    const ids = (result.items ?? []).filter((i) => i.outcome !== 'not-found' && i.outcome !== 'kept').map((i) => i.message_id ?? i.hash).filter((id) => id !== '');
    const touched = counts.redriven + counts.deleted;
    const entry: AuditEntry = {
      at: new Date().toISOString(),
      action,
      dlq: result.dlq,
      broker,
      who,
      filter: request.filter ?? null,
      target: request.target ?? null,
      counts,
      // The result lists at most 200 items: past the listing limit, or when it shows fewer than were touched, a digest.
      ...(ids.length <= IDS_LISTED && ids.length === touched ? { records: ids } : { digest: { count: touched, sha256: createHash('sha256').update(ids.join('\n')).digest('hex') } }),
      ...(result.edit !== undefined ? { edit: result.edit } : {}),
      ...(result.error !== undefined ? { error: result.error } : {}),
      ...(result.note !== undefined ? { note: result.note } : {}),
    };
    this.recent.push(entry);
    if (this.recent.length > KEPT) this.recent.shift();
    this.logger.info({ ...entry }, 'console: audit');
    if (this.file !== undefined) {
      try {
        appendFileSync(this.file, `${JSON.stringify(entry)}\n`);
      } catch (error) {
        this.logger.error({ file: this.file, error: (error as Error).message }, 'console: the audit log file could not be written; the entry is in this log line and in memory');
      }
    }
    return entry;
  }

  /** The latest `limit` entries, newest first: from the file when there is one, else from memory. */
  entries(limit: number): { source: 'file' | 'memory'; entries: AuditEntry[] } {
    if (this.file === undefined || !existsSync(this.file)) return { source: this.file === undefined ? 'memory' : 'file', entries: this.recent.slice(-limit).reverse() };
    const lines = tail(this.file, TAIL_BYTES).split('\n');
    const out: AuditEntry[] = [];
    for (let i = lines.length - 1; i >= 0 && out.length < limit; i--) {
      const line = lines[i];
      if (line === undefined || line === '') continue;
      try {
        out.push(JSON.parse(line) as AuditEntry);
      } catch {
        // a line cut by a crash mid-write
      }
    }
    return { source: 'file', entries: out };
  }
}

/** The last `bytes` of a file (its first line may be cut: the parse skips it). */
function tail(file: string, bytes: number): string {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, bytes);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } finally {
    closeSync(fd);
  }
}
