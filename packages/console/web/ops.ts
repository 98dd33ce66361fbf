// The page's operator features beside app.ts (the same classic script, compiled
// after it): the record panel's own actions (redrive, edit and redrive, delete),
// its stack trace, the "to queue" checks the server asks for, and the Audit page.
// Text from a broker or the audit file goes in as text nodes only.

interface AuditEntry {
  at: string; action: string; dlq: string; broker: string;
  who: { address: string | null; user: string | null; auth: string };
  filter: Record<string, unknown> | 'all' | null; target: string | null;
  counts: { redriven: number; deleted: number; kept: number; not_found: number };
  records?: string[]; digest?: { count: number; sha256: string }; edit?: { from: string; sent: string };
  error?: string; note?: string;
}

/** An answer of the API, whatever its status. */
async function post(path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(path, { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json', 'X-BQ-CSRF': csrf }, body: JSON.stringify(body) });
  const json = (await response.json().catch(() => ({ error: `HTTP ${response.status}` }))) as Record<string, unknown>;
  return { status: response.status, json };
}

/**
 * Sends an action; when the server says its "to queue" holds nothing and may
 * not exist, asks whether to go ahead (and create it), then sends it again.
 */
async function postAction(path: string, body: Record<string, unknown>): Promise<ActionResult> {
  let answer = await post(path, body);
  if (answer.status === 409 && answer.json.confirm === 'create') {
    const target = String(answer.json.target ?? '');
    const yes = await confirmDialog(`Send to "${target}"?`, `${String(answer.json.error ?? '')}.`);
    if (!yes) throw new Error(`nothing sent: "${target}" was not confirmed`);
    answer = await post(path, { ...body, create: true });
  }
  if (answer.status === 200 || (answer.status === 502 && 'action' in answer.json)) return answer.json as unknown as ActionResult;
  throw new Error(String(answer.json.error ?? `HTTP ${answer.status}`));
}

// ---------- the record panel ----------

/** The panel's own actions and the stack trace, after its summary. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- called by app.ts's detailView (one classic script)
function recordPanelExtras(record: Detail): Node[] {
  const out: Node[] = [];
  const stack = stackOf(record.dead_letter);
  if (stack !== null) {
    out.push(el('h3', {}, 'Stack trace'));
    out.push(el('pre', { class: 'code', testid: 'stack' }, stack));
  }
  if (session.read_only) return out;
  const ref = { index: record.index, hash: record.hash };
  const redrive = el('button', { testid: 'detail-redrive' }, 'Redrive');
  redrive.addEventListener('click', () => void (async () => {
    if (!(await confirmDialog('Redrive this record?', `It leaves ${dlq}: ${describeTarget()}.`))) return;
    await runAction('/api/redrive', { records: [ref], ...redriveOptions() });
  })());
  const remove = el('button', { class: 'danger', testid: 'detail-delete' }, 'Delete');
  remove.disabled = !session.can.delete;
  remove.addEventListener('click', () => void (async () => {
    if (!(await confirmDialog('Delete this record?', `It is removed from ${dlq} for good.`))) return;
    await runAction('/api/delete', { records: [ref] });
  })());
  const edit = el('button', { testid: 'detail-edit' }, 'Edit data and redrive…');
  const canMove = session.can.redrive && (record.kind === 'dead-letter');
  redrive.disabled = !canMove;
  edit.disabled = !canMove;
  const editor = el('div', { class: 'editor', testid: 'editor' });
  editor.hidden = true;
  edit.addEventListener('click', () => {
    editor.hidden = !editor.hidden;
    if (!editor.hidden && editor.childElementCount === 0) editor.append(...dataEditor(record, ref));
  });
  out.unshift(el('div', { class: 'buttons detail-actions' }, redrive, edit, remove), editor);
  return out;
}

function stackOf(block: unknown): string | null {
  if (block === null || typeof block !== 'object' || Array.isArray(block)) return null;
  const stack = (block as Record<string, unknown>).stack;
  return typeof stack === 'string' && stack !== '' ? stack : null;
}

/** A text box with the record's `data`, and the button that sends the edited copy. */
function dataEditor(record: Detail, ref: { index: number; hash: string }): Node[] {
  let data = '{}';
  try {
    data = JSON.stringify((JSON.parse(record.body.text) as { data?: unknown }).data ?? {}, null, 2);
  } catch {
    // not JSON: the server refuses to edit it anyway
  }
  const box = el('textarea', { class: 'code', testid: 'edit-data' });
  box.value = data;
  box.rows = Math.min(20, data.split('\n').length + 2);
  box.spellcheck = false;
  const send = el('button', { class: 'primary', testid: 'edit-send' }, 'Redrive the edited copy');
  const problem = el('p', { class: 'warnbox', testid: 'edit-error' });
  problem.hidden = true;
  send.addEventListener('click', () => void (async () => {
    problem.hidden = true;
    try {
      JSON.parse(box.value);
    } catch (error) {
      problem.textContent = `Not JSON: ${(error as Error).message}`;
      problem.hidden = false;
      return;
    }
    if (!(await confirmDialog('Redrive the edited copy?', `A copy with this data (meta.id, trace_id and everything else as stored) is sent ${describeTarget()}; the original leaves ${dlq} once the broker confirmed the copy.`))) return;
    try {
      const result = await postAction('/api/edit', { dlq, record: ref, data: box.value, ...redriveOptions() });
      if (result.error) throw new Error(result.error);
      toast(result.redriven === 1 ? `edit and redrive: 1 redriven${result.note ? ` · ${result.note}` : ''}` : 'edit and redrive: the record is no longer on the DLQ', result.redriven !== 1);
      resetView(false);
      await refresh();
    } catch (error) {
      problem.textContent = (error as Error).message;
      problem.hidden = false;
    }
  })());
  return [
    el('p', { class: 'muted' }, 'Only data can change. The copy keeps job, trace_id and meta (its id too) byte for byte; as in every redrive, dead_letter is removed and attempts is 0. The server checks the edited envelope before anything is sent.'),
    box,
    problem,
    el('div', { class: 'buttons' }, send),
  ];
}

// ---------- the Audit page ----------

function showAudit(on: boolean): void {
  $('audit').hidden = !on;
  document.querySelector('main')!.hidden = on;
  $('dlqs').hidden = on;
  $('detail').hidden = true;
  $('audit-toggle').textContent = on ? 'Records' : 'Audit';
  if (on) void loadAudit();
}

async function loadAudit(): Promise<void> {
  try {
    const { source, entries } = await api<{ source: string; entries: AuditEntry[] }>('/api/audit?limit=200');
    $('audit-line').textContent = `${n(entries.length)} latest action${entries.length === 1 ? '' : 's'}, newest first · from ${source === 'file' ? 'the audit log file' : 'this run (no --audit-log file)'}`;
    $('audit-rows').replaceChildren(...entries.map((e) => el('tr', { testid: 'audit-row' },
      el('td', { class: 'nowrap mono' }, time(Date.parse(e.at))),
      el('td', {}, e.action),
      el('td', { class: 'mono' }, e.dlq),
      el('td', { class: 'mono' }, `${e.who.user ?? (e.who.auth === 'token' ? 'token' : '—')} @ ${e.who.address ?? '?'}`),
      el('td', { class: 'mono' }, e.filter === null ? 'chosen records' : e.filter === 'all' ? 'all' : JSON.stringify(e.filter)),
      el('td', { class: 'mono' }, e.target ?? '—'),
      el('td', {}, [`${e.counts.redriven} redriven`, `${e.counts.deleted} deleted`, `${e.counts.kept} kept`, `${e.counts.not_found} not found`].filter((p) => !p.startsWith('0 ')).join(', ') || 'nothing changed'),
      el('td', { class: 'mono error' }, e.records !== undefined ? e.records.join(' ') : e.digest !== undefined ? `${n(e.digest.count)} records · sha256 ${e.digest.sha256.slice(0, 16)}…` : ''),
      el('td', { class: 'error' }, [e.edit ? 'edited data' : '', e.error ? `stopped: ${e.error}` : '', e.note ?? ''].filter((p) => p !== '').join(' · ')),
    )));
    $('audit-empty').hidden = entries.length > 0;
  } catch (error) {
    $('audit-line').textContent = (error as Error).message;
  }
}

/** Wires the Audit page; called once the session is loaded. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- called by app.ts's start (one classic script)
function startOps(): void {
  const toggle = $('audit-toggle');
  toggle.addEventListener('click', () => showAudit($('audit').hidden));
  $('audit-refresh').addEventListener('click', () => void loadAudit());
}
