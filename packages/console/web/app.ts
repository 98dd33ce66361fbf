// The console's page. Every piece of record text goes into the page as a text
// node (textContent, createTextNode): nothing read from a broker is ever parsed
// as HTML, and the CSP forbids inline script besides.

interface Session {
  csrf: string;
  read_only: boolean;
  broker: { binding: string; target: string };
  dlqs: string[];
  reads: 'scan' | 'none';
  removes: 'in-place' | 'take-and-restore';
  can: { depth: boolean; remove: boolean; redrive: boolean; bypass: boolean; purge: boolean; delete: boolean };
  limits: { scan: number; budget_ms: number; page: number; sort_window: number };
  interrupted: { dlq: string; action: string; started_at: number; copied: number; written_back: number }[];
}

interface Summary {
  index: number; location: string | null; hash: string; size: number; kind: string; reason: string;
  error: string | null; exception: string | null; attempts: number | null; original_queue: string | null;
  failed_at: number | null; lang: string | null; dead_letter_lang: string | null; trace_id: string | null;
  urn: string | null; message_id: string | null;
}

interface Detail extends Summary {
  body: { encoding: 'utf-8' | 'base64'; text: string };
  dead_letter: unknown;
  headers: Record<string, string | number | boolean | null>;
  key: { text: string | null; base64: string } | null;
  raw: { encoding: 'text' | 'base64'; text: string | null; hex: string | null; bytes: number } | null;
}

/** Why a read answered before its work was done: its time budget, or the scan limit. */
type Stopped = 'time-budget' | 'scan-limit' | null;

interface Page {
  records: Summary[]; depth: number | null; from: number; scanned: number; matched: number;
  complete: boolean; limited: boolean; stopped: Stopped; has_more: boolean; next: number | null; mode: string;
}

interface Stats {
  depth: number | null; scanned: number; complete: boolean; stopped: Stopped; cursor: string | null; matched: number;
  by_reason: Record<string, number>; by_urn: Record<string, number>; history: { t: number; depth: number }[];
  failed_at: { width_ms: number; buckets: { t: number; count: number }[] };
  groups: Group[]; group_count: number; ungrouped: number;
}

interface Group {
  id: string; urn: string | null; exception: string | null; error: string | null; count: number;
  reasons: Record<string, number>; first_failed_at: number | null; last_failed_at: number | null; langs: Record<string, number>;
}

interface ActionResult {
  action: string; method: string; redriven: number; deleted: number; kept: number; not_found: number;
  items: { outcome: string; note?: string; to?: string }[]; error?: string; note?: string;
}

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

let session: Session;
/** The session's CSRF token, sent on every API request once the session is loaded. */
let csrf = '';
let dlq = '';
/** Queue order: the `from` of each page visited, to go back. Sorted: the offset. */
let cursors: number[] = [0];
let page: Page | undefined;
const selected = new Map<string, { index: number; hash: string }>();
/** The DLQs in the tabs: the configured ones, then those discovered on the broker. */
let allDlqs: string[] = [];

// ---------- small helpers ----------

function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: { class?: string; title?: string; testid?: string } = {}, ...children: (Node | string | null)[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props.class) node.className = props.class;
  if (props.title) node.title = props.title;
  if (props.testid) node.dataset.testid = props.testid;
  for (const child of children) if (child !== null) node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  return node;
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

async function api<T>(path: string, body?: unknown): Promise<T> {
  // Reads carry the session's CSRF token too: the API answers no request a page on another site could make.
  const response = await fetch(path, body === undefined
    ? { credentials: 'same-origin', headers: csrf === '' ? {} : { 'X-BQ-CSRF': csrf } }
    : { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json', 'X-BQ-CSRF': csrf }, body: JSON.stringify(body) });
  const json = (await response.json().catch(() => ({ error: `HTTP ${response.status}` }))) as T & { error?: string };
  if (!response.ok && !(body !== undefined && response.status === 502 && 'action' in json)) throw new Error(json.error ?? `HTTP ${response.status}`);
  return json;
}

function toast(text: string, bad = false): void {
  const node = $('toast');
  node.textContent = text;
  node.className = bad ? 'toast bad' : 'toast';
  node.hidden = false;
  clearTimeout((toast as { timer?: number }).timer);
  (toast as { timer?: number }).timer = window.setTimeout(() => (node.hidden = true), bad ? 12000 : 6000);
}

function time(ms: number | null): string {
  if (ms === null) return '—';
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

const n = (value: number) => value.toLocaleString('en-US');

function reasonBadge(record: Pick<Summary, 'kind' | 'reason'>): HTMLElement {
  const reason = record.kind === 'not-json' ? 'not JSON' : record.kind === 'no-dead-letter' ? 'no block' : record.reason || 'none';
  const css = record.kind === 'not-json' || record.kind === 'no-dead-letter' ? 'none' : record.reason;
  return el('span', { class: `reason reason-${css.replace(/[^a-z_]/g, '')}` }, reason);
}

function filterParams(): URLSearchParams {
  const form = new FormData($<HTMLFormElement>('filters'));
  const params = new URLSearchParams();
  for (const name of ['find', 'group', 'q', 'reason', 'urn', 'lang', 'dl_lang', 'sort', 'dir']) {
    const value = String(form.get(name) ?? '').trim();
    if (value !== '') params.set(name, value);
  }
  for (const name of ['since', 'until']) {
    const value = String(form.get(name) ?? '');
    if (value !== '') params.set(name, String(new Date(value).getTime()));
  }
  return params;
}

function filterOnly(): Record<string, string> {
  const params = filterParams();
  params.delete('sort');
  params.delete('dir');
  return Object.fromEntries(params);
}

const sortedView = () => (filterParams().get('sort') ?? 'position') !== 'position' || filterParams().get('dir') === 'desc';

// ---------- loading ----------

/** Each load of the page or of the charts gets a new number: a search or count carrying on stops once the view changed. */
let pageRun = 0;
let statsRun = 0;
/** The search or count the operator stopped (the button then reads "Keep searching"/"Keep counting"). */
let pageHeld = false;
let statsHeld = false;
let statsCursor: string | null = null;

async function loadPage(): Promise<void> {
  const run = ++pageRun;
  pageHeld = false;
  const params = filterParams();
  params.set('dlq', dlq);
  params.set('limit', '50');
  const at = cursors[cursors.length - 1] ?? 0;
  params.set(sortedView() ? 'offset' : 'from', String(at));
  try {
    const first = await api<Page>(`/api/records?${params}`);
    if (run !== pageRun) return;
    page = first;
    renderPage();
    // The first answer is on the page; the rest of a long search comes in the background.
    void carryOnPage(run).catch((error: Error) => {
      if (run === pageRun) showNotice(error.message);
    });
  } catch (error) {
    if (run !== pageRun) return;
    page = undefined;
    $('rows').replaceChildren();
    $('page-line').textContent = '';
    $('scan-more').hidden = true;
    showNotice((error as Error).message);
  }
}

/**
 * A page in queue order that answered early (its time budget, or the scan
 * limit) with fewer rows than asked: carry on from where it stopped and add
 * what the next steps find, until the page is full, the DLQ ends, the view
 * changes or the operator stops it. A sorted page cannot carry on.
 */
async function carryOnPage(run: number): Promise<void> {
  while (page !== undefined && page.limited && page.next !== null && page.records.length < 50 && !sortedView() && !pageHeld && run === pageRun) {
    const params = filterParams();
    params.set('dlq', dlq);
    params.set('limit', String(50 - page.records.length));
    params.set('from', String(page.next));
    const more = await api<Page>(`/api/records?${params}`);
    if (run !== pageRun) return;
    page = { ...more, records: [...page.records, ...more.records], from: page.from, scanned: page.scanned + more.scanned, matched: page.matched + more.matched };
    renderPage();
  }
}

async function loadStats(): Promise<void> {
  const run = ++statsRun;
  statsHeld = false;
  statsCursor = null;
  // The charts and the groups follow the filter.
  const params = new URLSearchParams({ dlq, ...filterOnly() });
  // The first counts are on the page; a big DLQ's further steps come in the background.
  if (await statsStep(run, params)) void countStats(run, params);
}

/** The remaining steps of one chart scan. */
async function countStats(run: number, params: URLSearchParams): Promise<void> {
  while (await statsStep(run, params));
}

/** One step of a chart scan: it answers the counts so far and a cursor, and the next step adds to them. True when another step should follow. */
async function statsStep(run: number, params: URLSearchParams): Promise<boolean> {
  try {
    const stats = await api<Stats>(`/api/stats?${params}`);
    if (run !== statsRun) return false;
    statsCursor = stats.cursor;
    renderStats(stats);
    if (stats.cursor === null || statsHeld) return false;
    params.set('cursor', stats.cursor);
    return true;
  } catch (error) {
    if (run !== statsRun) return false;
    $('charts-more').hidden = true;
    $('stats-line').textContent = (error as Error).message;
    return false;
  }
}

/** An action a killed console left unfinished on this DLQ: new actions are refused until it is finished. */
function showInterrupted(): void {
  const left = session.interrupted.find((i) => i.dlq === dlq);
  $('interrupted').hidden = left === undefined || session.read_only;
  if (left === undefined) return;
  $('interrupted-text').textContent = `An earlier ${left.action} on ${dlq} (started ${time(left.started_at)}) was interrupted: ${n(left.copied)} record(s) already copied to their target and ${n(left.written_back)} written back may also still be on this DLQ. Finishing removes those second copies from the DLQ.`;
}

function showNotice(text: string): void {
  const notice = $('notice');
  notice.textContent = text;
  notice.hidden = text === '';
}

// ---------- rendering ----------

function renderPage(): void {
  if (page === undefined) return;
  const rows = page.records.map((record) => {
    const key = `${record.index}:${record.hash}`;
    const box = el('input');
    box.type = 'checkbox';
    box.checked = selected.has(key);
    box.setAttribute('aria-label', `select record ${record.index + 1}`);
    box.hidden = session.read_only;
    box.addEventListener('click', (event) => event.stopPropagation());
    box.addEventListener('change', () => {
      if (box.checked) selected.set(key, { index: record.index, hash: record.hash });
      else selected.delete(key);
      tr.classList.toggle('selected', box.checked);
      renderSelection();
    });
    const lang = `${record.lang ?? '?'} → ${record.dead_letter_lang ?? '?'}`;
    const tr = el('tr', { testid: 'record-row' },
      el('td', { class: 'check' }, box),
      el('td', { class: 'mono', title: record.location ?? '' }, String(record.index + 1)),
      el('td', { class: 'nowrap' }, time(record.failed_at)),
      el('td', {}, reasonBadge(record)),
      el('td', { class: 'mono' }, record.urn ?? '—'),
      el('td', { class: 'error', testid: 'record-error' }, record.error ?? '—'),
      el('td', { class: 'mono' }, record.exception ?? '—'),
      el('td', {}, record.attempts === null ? '—' : String(record.attempts)),
      el('td', { class: 'mono' }, record.original_queue ?? '—'),
      el('td', { class: 'lang', title: 'produced in → dead-lettered in' }, lang),
      el('td', { class: 'mono', title: record.message_id ? `meta.id ${record.message_id}` : '' }, record.trace_id ? record.trace_id.slice(0, 13) + (record.trace_id.length > 13 ? '…' : '') : '—'),
    );
    tr.classList.toggle('selected', box.checked);
    tr.addEventListener('click', () => {
      // A URL per record: #/record/<meta.id or fingerprint>?dlq=<dlq>, opened directly on load.
      history.replaceState(null, '', recordLink(record));
      void openDetail(record);
    });
    return tr;
  });
  $('rows').replaceChildren(...rows);
  $('empty').hidden = rows.length > 0;
  $('empty').textContent = !page.limited ? 'No records match.' : pageHeld || sortedView() ? 'No match among the records scanned.' : 'No match yet; searching on…';
  const first = page.records[0];
  const shownFrom = sortedView() ? (cursors[cursors.length - 1] ?? 0) + 1 : first ? first.index + 1 : 0;
  const depth = page.depth === null ? 'an unknown number of' : n(page.depth);
  const scanned = `scanned ${n(page.scanned)} of ${depth} records${page.from > 0 ? ` from position ${n(page.from + 1)}` : ''}${stoppedNote(page)}`;
  const range = page.records.length === 0 ? 'no rows' : sortedView()
    ? `rows ${n(shownFrom)}–${n(shownFrom + page.records.length - 1)} of ${n(page.matched)} matching`
    : `${n(page.records.length)} row${page.records.length === 1 ? '' : 's'} from position ${n(shownFrom)}`;
  $('page-line').textContent = `${range} · ${scanned}`;
  $<HTMLButtonElement>('prev').disabled = cursors.length <= 1;
  $<HTMLButtonElement>('next').disabled = !page.has_more;
  // A search that answered early carries on by itself; the operator can stop it and start it again.
  const more = $<HTMLButtonElement>('scan-more');
  more.hidden = !(page.limited && page.next !== null && page.records.length < 50 && !sortedView());
  more.textContent = pageHeld ? 'Keep searching' : 'Stop searching';
  showNotice('');
  renderSelection();
}

/** What the page line adds when a read answered before its end. */
function stoppedNote(read: { limited: boolean; stopped: Stopped; records?: unknown[] }): string {
  if (!read.limited) return '';
  const why = read.stopped === 'scan-limit' ? `the scan limit of ${n(session.limits.scan)} records per request` : `the time budget of ${n(session.limits.budget_ms)} ms per request`;
  if (sortedView()) return ` (sorted among these: stopped at ${why}; narrow the filter or sort by position)`;
  return pageHeld ? ` (stopped: ${why}, then by you)` : ` (answered at ${why}; searching on…)`;
}

function renderSelection(): void {
  const count = selected.size;
  $('selection').textContent = count === 0 ? 'nothing selected' : `${n(count)} selected`;
  $<HTMLButtonElement>('redrive-selected').disabled = count === 0;
  $<HTMLButtonElement>('delete-selected').disabled = count === 0 || !session.can.delete;
  const all = $<HTMLInputElement>('select-all');
  const keys = (page?.records ?? []).map((r) => `${r.index}:${r.hash}`);
  all.checked = keys.length > 0 && keys.every((k) => selected.has(k));
}

function renderTabs(depths: Map<string, number | null>): void {
  $('dlqs').replaceChildren(...allDlqs.map((name) => {
    const depth = depths.get(name);
    const button = el('button', { testid: 'dlq-tab' }, name, depth === undefined || depth === null ? null : el('span', { class: 'count' }, n(depth)));
    button.setAttribute('aria-current', String(name === dlq));
    button.addEventListener('click', () => {
      dlq = name;
      showInterrupted();
      resetView();
      void refresh();
    });
    return button;
  }));
}

const tabDepths = new Map<string, number | null>();

function renderStats(stats: Stats): void {
  tabDepths.set(dlq, stats.depth);
  renderTabs(tabDepths);
  const of = stats.depth === null ? '' : ` of ${n(stats.depth)}`;
  const progress = stats.complete ? '' : statsHeld ? ' so far (the first ones: counting stopped by you)' : ' so far (the first ones; counting on…)';
  $('stats-line').textContent = `Charts count ${n(stats.scanned)}${of} records${progress}; depth sampled while the console runs.`;
  const more = $<HTMLButtonElement>('charts-more');
  more.hidden = stats.complete;
  more.textContent = statsHeld ? 'Keep counting' : 'Stop counting';
  lineChart($('chart-depth'), stats.history);
  barChart($('chart-reason'), stats.by_reason, (label) => `reason-${label}`);
  barChart($('chart-urn'), stats.by_urn, () => 'urn');
  histogramChart($('chart-failed-at'), stats.failed_at);
  renderGroups(stats);
}

const BAR_COLOURS: Record<string, string> = { 'reason-failed': '#d9534f', 'reason-unknown_urn': '#e0a030', 'reason-poison': '#8a5cd0', 'reason-none': '#98a2b3', urn: '#3b6fd8' };

function barChart(host: HTMLElement, counts: Record<string, number>, colour: (label: string) => string): void {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]).slice(0, 7);
  if (entries.length === 0) {
    host.replaceChildren(el('p', { class: 'muted' }, 'No records.'));
    return;
  }
  const width = 420;
  const row = 20;
  const labelWidth = 170;
  const max = Math.max(...entries.map(([, v]) => v));
  const chart = svg('svg', { viewBox: `0 0 ${width} ${entries.length * row + 4}`, class: 'bars', preserveAspectRatio: 'xMinYMin meet', role: 'img', 'aria-label': entries.map(([k, v]) => `${k}: ${v}`).join(', ') });
  entries.forEach(([label, value], i) => {
    const y = i * row + 2;
    const barWidth = Math.max(2, ((width - labelWidth - 50) * value) / max);
    const shown = label.length > 26 ? `…${label.slice(-25)}` : label;
    chart.append(svg('text', { x: labelWidth - 6, y: y + 13, 'text-anchor': 'end', class: 'label' }, shown));
    const bar = svg('rect', { x: labelWidth, y: y + 2, width: barWidth, height: row - 6, rx: 3, fill: BAR_COLOURS[colour(label)] ?? '#3b6fd8' });
    bar.append(svg('title', {}, `${label}: ${value}`));
    chart.append(bar);
    chart.append(svg('text', { x: labelWidth + barWidth + 5, y: y + 13 }, n(value)));
  });
  host.replaceChildren(chart);
}

function lineChart(host: HTMLElement, samples: { t: number; depth: number }[]): void {
  if (samples.length === 0) {
    host.replaceChildren(el('p', { class: 'muted' }, 'No samples yet.'));
    return;
  }
  const width = 420;
  const height = 140;
  const left = 44;
  const bottom = 18;
  const max = Math.max(1, ...samples.map((s) => s.depth));
  const t0 = samples[0]!.t;
  const t1 = Math.max(t0 + 1, samples[samples.length - 1]!.t);
  const x = (t: number) => left + ((width - left - 6) * (t - t0)) / (t1 - t0);
  const y = (d: number) => 6 + (height - bottom - 6) * (1 - d / max);
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `depth now ${samples[samples.length - 1]!.depth}, highest ${max}` });
  for (const tick of [0, max / 2, max]) {
    chart.append(svg('line', { x1: left, x2: width - 6, y1: y(tick), y2: y(tick), stroke: '#e3e6ec' }));
    chart.append(svg('text', { x: left - 6, y: y(tick) + 4, 'text-anchor': 'end' }, n(Math.round(tick))));
  }
  const points = samples.map((s) => `${x(s.t).toFixed(1)},${y(s.depth).toFixed(1)}`);
  if (samples.length === 1) points.push(`${(width - 6).toFixed(1)},${y(samples[0]!.depth).toFixed(1)}`);
  chart.append(svg('polygon', { points: `${left},${y(0)} ${points.join(' ')} ${points[points.length - 1]!.split(',')[0]},${y(0)}`, fill: '#3b6fd8', 'fill-opacity': 0.12 }));
  chart.append(svg('polyline', { points: points.join(' '), fill: 'none', stroke: '#3b6fd8', 'stroke-width': 2 }));
  const clock = (t: number) => new Date(t).toTimeString().slice(0, 5);
  chart.append(svg('text', { x: left, y: height - 3 }, clock(t0)));
  chart.append(svg('text', { x: width - 6, y: height - 3, 'text-anchor': 'end' }, clock(t1)));
  host.replaceChildren(chart);
}

// ---------- the record's full view ----------

async function openDetail(record: Summary): Promise<void> {
  const panel = $('detail');
  const body = $('detail-body');
  $('detail-title').textContent = `Record #${record.index + 1}${record.urn ? ` · ${record.urn}` : ''}`;
  $('detail-link').textContent = new URL(recordLink(record), location.href).href;
  body.replaceChildren(el('p', { class: 'muted' }, 'Loading…'));
  panel.hidden = false;
  try {
    const { record: full } = await api<{ record: Detail }>(`/api/record?${new URLSearchParams({ dlq, index: String(record.index), hash: record.hash })}`);
    body.replaceChildren(...detailView(full));
  } catch (error) {
    body.replaceChildren(el('p', { class: 'warnbox' }, (error as Error).message));
  }
}

function detailView(record: Detail): Node[] {
  const facts: [string, string][] = [
    ['reason', record.kind === 'dead-letter' || record.kind === 'poison' ? record.reason : record.kind === 'not-json' ? '(not a JSON object)' : '(no dead_letter block: version-gated or written by a tool)'],
    ['URN', record.urn ?? '—'],
    ['error', record.error ?? '—'],
    ['exception', record.exception ?? '—'],
    ['attempts', record.attempts === null ? '—' : String(record.attempts)],
    ['original queue', record.original_queue ?? '—'],
    ['failed at', record.failed_at === null ? '—' : `${time(record.failed_at)} (${record.failed_at})`],
    ['produced in', record.lang ?? '—'],
    ['dead-lettered in', record.dead_letter_lang ?? '—'],
    ['trace_id', record.trace_id ?? '—'],
    ['meta.id', record.message_id ?? '—'],
    ['position', `${record.index + 1} from the head${record.location ? ` (${record.location})` : ''}`],
    ['size', `${n(record.size)} bytes · sha256 ${record.hash}…`],
  ];
  const out: Node[] = [el('h3', {}, 'Summary'), definitionList(facts), ...recordPanelExtras(record)];
  if (record.raw !== null) {
    out.push(el('h3', {}, 'Poison: the original bytes'));
    out.push(el('p', { class: 'warnbox' }, `The consumer could not read this message (${record.error ?? 'poison'}). Below are the ${n(record.raw.bytes)} original bytes${record.raw.encoding === 'base64' ? ', decoded from base64' : ''}${record.raw.text === null ? '. They are not valid UTF-8, so they are shown as hex' : ', shown as inert text'}.`));
    out.push(el('pre', { class: 'code', testid: 'poison-raw' }, record.raw.text ?? record.raw.hex ?? ''));
  }
  if (record.dead_letter !== null) {
    out.push(el('h3', {}, 'dead_letter block'));
    out.push(el('pre', { class: 'code', testid: 'dead-letter-block' }, ...prettyJson(JSON.stringify(record.dead_letter))));
  }
  const headers = Object.entries(record.headers);
  out.push(el('h3', {}, 'Native metadata'));
  out.push(headers.length === 0 && record.key === null
    ? el('p', { class: 'muted' }, `None: the ${session.broker.binding} binding keeps no metadata beside this body.`)
    : definitionList([
      ...headers.map(([k, v]): [string, string] => [k, v === null ? 'null' : String(v)]),
      ...(record.key === null ? [] : [['record key', record.key.text ?? `base64 ${record.key.base64}`] as [string, string]]),
    ], 'headers'));
  out.push(el('h3', {}, record.body.encoding === 'utf-8' ? 'Stored body' : 'Stored body (not UTF-8: base64)'));
  out.push(el('pre', { class: 'code', testid: 'envelope' }, ...(record.body.encoding === 'utf-8' ? prettyJson(record.body.text) : [document.createTextNode(record.body.text)])));
  return out;
}

function definitionList(rows: [string, string][], testid?: string): HTMLElement {
  const list = el('dl', testid ? { testid } : {});
  for (const [term, value] of rows) list.append(el('dt', {}, term), el('dd', { class: term === 'error' ? '' : 'mono' }, value));
  return list;
}

/**
 * JSON text re-indented token by token, without parsing its values, so big
 * integers and 1.0 show exactly as stored; text that is not JSON comes back
 * as it is. Tokens become coloured spans holding text nodes.
 */
function prettyJson(text: string): Node[] {
  const tokens = /("(?:[^"\\]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|(true|false|null)|([{}[\],])|(\s+)|(.)/gs;
  const out: Node[] = [];
  let depth = 0;
  let plain = '';
  let valid = true;
  const flush = () => {
    if (plain !== '') out.push(document.createTextNode(plain));
    plain = '';
  };
  const span = (css: string, value: string) => {
    flush();
    out.push(el('span', { class: css }, value));
  };
  const newline = () => `\n${'  '.repeat(Math.max(0, depth))}`;
  for (const m of text.matchAll(tokens)) {
    const [, str, colon, num, lit, punct, space, other] = m;
    if (str !== undefined) {
      span(colon ? 'tok-key' : 'tok-str', str);
      if (colon) plain += ': ';
    } else if (num !== undefined) span('tok-num', num);
    else if (lit !== undefined) span('tok-lit', lit);
    else if (punct === '{' || punct === '[') {
      const after = text.slice((m.index ?? 0) + 1).trimStart()[0];
      depth += 1;
      plain += after === (punct === '{' ? '}' : ']') ? punct : punct + newline();
    } else if (punct === '}' || punct === ']') {
      depth -= 1;
      const before = plain.trimEnd();
      plain = before.endsWith('{') || before.endsWith('[') ? before + punct : (plain.trimEnd() + newline() + punct);
    } else if (punct === ',') plain += `,${newline()}`;
    else if (space !== undefined) continue;
    else if (other !== undefined) valid = false;
  }
  flush();
  return valid ? out : [document.createTextNode(text)];
}

// ---------- actions ----------

function confirmDialog(title: string, text: string, typeName?: string): Promise<boolean> {
  const dialog = $<HTMLDialogElement>('confirm');
  $('confirm-title').textContent = title;
  $('confirm-text').textContent = text;
  const typeLabel = $('confirm-type-label');
  const input = $<HTMLInputElement>('confirm-input');
  const ok = $<HTMLButtonElement>('confirm-ok');
  typeLabel.hidden = typeName === undefined;
  $('confirm-name').textContent = typeName ?? '';
  input.value = '';
  ok.disabled = typeName !== undefined;
  input.oninput = () => (ok.disabled = input.value !== typeName);
  return new Promise((resolve) => {
    dialog.onclose = () => resolve(dialog.returnValue === 'ok');
    dialog.returnValue = '';
    dialog.showModal();
  });
}

function redriveOptions(): { to?: string; bypass: boolean } {
  const to = $<HTMLInputElement>('to-queue').value.trim();
  return { ...(to !== '' ? { to } : {}), bypass: $<HTMLInputElement>('bypass').checked };
}

function describeTarget(): string {
  const { to, bypass } = redriveOptions();
  return `${to ? `to ${to}` : 'each to its original queue'}, attempts reset to 0, dead_letter removed${bypass ? ', marked as replays (bq-replay-bypass)' : ''}`;
}

async function runAction(path: string, body: Record<string, unknown>): Promise<void> {
  try {
    const result: ActionResult = await postAction(path, { dlq, ...body });
    const parts = [
      result.redriven ? `${n(result.redriven)} redriven` : '',
      result.deleted ? `${n(result.deleted)} deleted` : '',
      result.kept ? `${n(result.kept)} kept` : '',
      result.not_found ? `${n(result.not_found)} not found` : '',
    ].filter((p) => p !== '');
    const counts = parts.length === 0 ? 'nothing changed' : parts.join(', ');
    if (result.error) toast(`${result.action} stopped: ${result.error}. So far: ${counts}. Nothing was lost.`, true);
    else toast(`${result.action}: ${counts}${result.note ? ` · ${result.note}` : ''}`);
  } catch (error) {
    toast((error as Error).message, true);
  }
  selected.clear();
  resetView(false);
  await refresh();
}

async function redriveSelected(): Promise<void> {
  const count = selected.size;
  if (!(await confirmDialog(`Redrive ${n(count)} record${count === 1 ? '' : 's'}?`, `They leave ${dlq}: ${describeTarget()}.`))) return;
  await runAction('/api/redrive', { records: [...selected.values()], ...redriveOptions() });
}

async function redriveMatching(): Promise<void> {
  const filter = filterOnly();
  const params = new URLSearchParams({ dlq, ...filter });
  const stats = await api<Stats>(`/api/stats?${params}`).catch(() => undefined);
  const count = stats ? `${n(stats.matched)}${stats.complete ? '' : '+'}` : 'every';
  const what = Object.keys(filter).length === 0 ? 'every record' : `${count} record(s) matching the filter`;
  if (!(await confirmDialog(`Redrive ${Object.keys(filter).length === 0 ? `all ${count}` : count} record(s)?`, `This moves ${what} off ${dlq}: ${describeTarget()}. Poison records stay.`))) return;
  // Every record is chosen explicitly: the API refuses a filter that narrows nothing.
  await runAction('/api/redrive', { matching: Object.keys(filter).length === 0 ? 'all' : filter, ...redriveOptions() });
}

async function deleteSelected(): Promise<void> {
  const count = selected.size;
  if (!(await confirmDialog(`Delete ${n(count)} record${count === 1 ? '' : 's'}?`, `They are removed from ${dlq} for good.`))) return;
  await runAction('/api/delete', { records: [...selected.values()] });
}

async function purge(): Promise<void> {
  const depth = tabDepths.get(dlq);
  if (!(await confirmDialog(`Purge ${dlq}?`, `Every waiting record${depth === undefined || depth === null ? '' : ` (${n(depth)})`} is deleted for good.`, dlq))) return;
  await runAction('/api/purge', { confirm: dlq });
}

// ---------- wiring ----------

function resetView(clearSelection = true): void {
  cursors = [0];
  if (clearSelection) selected.clear();
  $('detail').hidden = true;
}

async function refresh(): Promise<void> {
  await Promise.all([loadPage(), loadStats()]);
}

async function start(): Promise<void> {
  session = await api<Session>('/api/session');
  csrf = session.csrf;
  dlq = session.dlqs[0] ?? '';
  allDlqs = [...session.dlqs];
  $('broker').textContent = `${session.broker.binding} · ${session.broker.target}`;
  $('read-only').hidden = !session.read_only;
  $('actions').hidden = session.read_only;
  for (const box of document.querySelectorAll<HTMLInputElement>('#select-all')) box.hidden = session.read_only;
  $<HTMLButtonElement>('purge').hidden = !session.can.purge;
  $('bypass-label').hidden = !session.can.bypass;
  if (!session.read_only && session.removes === 'take-and-restore' && session.can.delete) {
    const hint = $('removal-hint');
    hint.textContent = `The ${session.broker.binding} binding cannot delete one record in place. Delete and redrive of chosen records take records off the head of the DLQ, remove the chosen ones and write the others taken ahead of them back to the end of the queue: nothing is lost, but their order changes.`;
    hint.hidden = false;
  }
  startOps();
  showInterrupted();
  $('recover').addEventListener('click', () => void (async () => {
    await runAction('/api/recover', {});
    session = await api<Session>('/api/session');
    showInterrupted();
  })());
  if (session.reads === 'none') showNotice(`The ${session.broker.binding} binding cannot read a queue without consuming it, so records are not listed.`);
  renderTabs(tabDepths);

  $<HTMLFormElement>('filters').addEventListener('submit', (event) => {
    event.preventDefault();
    resetView();
    void refresh();
  });
  $<HTMLFormElement>('filters').addEventListener('reset', () => setTimeout(() => {
    clearGroup(false);
    resetView();
    void refresh();
  }));
  $('scan-more').addEventListener('click', () => {
    if (!pageHeld) {
      pageHeld = true;
      renderPage();
      return;
    }
    pageHeld = false;
    renderPage();
    void carryOnPage(pageRun).catch((error: Error) => showNotice(error.message));
  });
  $('charts-more').addEventListener('click', () => {
    if (!statsHeld) {
      statsHeld = true;
      $('charts-more').textContent = 'Keep counting';
      return;
    }
    statsHeld = false;
    if (statsCursor === null) return void loadStats();
    $('charts-more').textContent = 'Stop counting';
    void countStats(statsRun, new URLSearchParams({ dlq, cursor: statsCursor }));
  });
  $('prev').addEventListener('click', () => {
    cursors.pop();
    void loadPage();
  });
  $('next').addEventListener('click', () => {
    if (page === undefined) return;
    cursors.push(sortedView() ? (cursors[cursors.length - 1] ?? 0) + page.records.length : (page.next ?? 0));
    void loadPage();
  });
  $<HTMLInputElement>('select-all').addEventListener('change', (event) => {
    const on = (event.target as HTMLInputElement).checked;
    for (const record of page?.records ?? []) {
      const key = `${record.index}:${record.hash}`;
      if (on) selected.set(key, { index: record.index, hash: record.hash });
      else selected.delete(key);
    }
    renderPage();
  });
  $('detail-close').addEventListener('click', closeDetail);
  wireFinding();
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') closeDetail();
  });
  $('redrive-selected').addEventListener('click', () => void redriveSelected());
  $('redrive-matching').addEventListener('click', () => void redriveMatching());
  $('delete-selected').addEventListener('click', () => void deleteSelected());
  $('purge').addEventListener('click', () => void purge());
  await Promise.all([refresh(), loadOverview()]);
  await openFromLink();
  setInterval(() => void api<{ history: Stats['history'] }>(`/api/history?${new URLSearchParams({ dlq })}`).then((h) => lineChart($('chart-depth'), h.history), () => undefined), 15000);
  document.body.dataset.ready = 'true';
}

// ---------- finding records, failure groups, the overview ----------

/** The id a record's link names: its meta.id, else the fingerprint of its bytes. */
function recordLink(record: Pick<Summary, 'message_id' | 'hash'>): string {
  return `#/record/${encodeURIComponent(record.message_id ?? record.hash)}?${new URLSearchParams({ dlq })}`;
}

function closeDetail(): void {
  $('detail').hidden = true;
  if (location.hash.startsWith('#/record/')) history.replaceState(null, '', location.pathname + location.search);
}

/** Opens the record a `#/record/<id>?dlq=<dlq>` link names, wherever it is in the DLQ. */
async function openFromLink(): Promise<void> {
  const match = /^#\/record\/([^?]+)(?:\?(.*))?$/.exec(location.hash);
  if (match === null) return;
  const id = decodeURIComponent(match[1] ?? '');
  const linked = new URLSearchParams(match[2] ?? '').get('dlq');
  if (linked !== null && linked !== dlq && allDlqs.includes(linked)) {
    dlq = linked;
    renderTabs(tabDepths);
    resetView();
    await refresh();
  }
  const panel = $('detail');
  $('detail-title').textContent = `Record ${id}`;
  $('detail-link').textContent = location.href;
  $('detail-body').replaceChildren(el('p', { class: 'muted' }, 'Looking for it…'));
  panel.hidden = false;
  try {
    // A deep record in a big DLQ takes several requests: each answers within its time budget and says where to carry on.
    let from = 0;
    let scanned = 0;
    let found: { record: Detail | null; scanned: number; depth: number | null; next?: number } | undefined;
    for (;;) {
      found = await api<{ record: Detail | null; scanned: number; depth: number | null; next?: number }>(`/api/find?${new URLSearchParams({ dlq, id, from: String(from) })}`);
      scanned += found.scanned;
      if (found.record !== null || found.next === undefined || $('detail').hidden) break;
      from = found.next;
      $('detail-body').replaceChildren(el('p', { class: 'muted', testid: 'find-progress' }, `Looking for it… scanned ${n(scanned)}${found.depth === null ? '' : ` of ${n(found.depth)}`} records`));
    }
    if (found.record === null) return;
    $('detail-title').textContent = `Record #${found.record.index + 1}${found.record.urn ? ` · ${found.record.urn}` : ''}`;
    $('detail-body').replaceChildren(...detailView(found.record));
  } catch (error) {
    $('detail-body').replaceChildren(el('p', { class: 'warnbox' }, (error as Error).message));
  }
}

function histogramChart(host: HTMLElement, histogram: Stats['failed_at']): void {
  const buckets = histogram.buckets;
  if (buckets.length === 0) {
    host.replaceChildren(el('p', { class: 'muted' }, 'No failed_at times.'));
    return;
  }
  const width = 420;
  const height = 140;
  const bottom = 18;
  const t0 = buckets[0]!.t;
  const span = Math.max(1, Math.round((buckets[buckets.length - 1]!.t - t0) / histogram.width_ms) + 1);
  const max = Math.max(...buckets.map((b) => b.count));
  const barWidth = (width - 8) / span;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `${buckets.reduce((sum, b) => sum + b.count, 0)} failures in ${buckets.length} buckets of ${Math.round(histogram.width_ms / 1000)} s, busiest ${max}` });
  for (const bucket of buckets) {
    const x = 4 + ((bucket.t - t0) / histogram.width_ms) * barWidth;
    const h = ((height - bottom - 8) * bucket.count) / max;
    const bar = svg('rect', { x: x.toFixed(1), y: (height - bottom - h).toFixed(1), width: Math.max(1, barWidth - 1).toFixed(1), height: h.toFixed(1), fill: '#d9534f' });
    bar.append(svg('title', {}, `${time(bucket.t)}: ${bucket.count}`));
    chart.append(bar);
  }
  chart.append(svg('text', { x: 4, y: height - 3 }, time(t0)));
  chart.append(svg('text', { x: width - 4, y: height - 3, 'text-anchor': 'end' }, time(buckets[buckets.length - 1]!.t + histogram.width_ms)));
  host.replaceChildren(chart);
}

/** The groups of the records passing the filter: click one to filter by it; redrive or delete it. */
function renderGroups(stats: Stats): void {
  const shown = stats.groups.slice(0, 25);
  $('groups-line').textContent = `${n(stats.group_count)} group${stats.group_count === 1 ? '' : 's'} among ${n(stats.matched)} record(s)${stats.complete ? '' : ' of the records counted so far'}${shown.length < stats.group_count ? `, the ${shown.length} largest shown` : ''}${stats.ungrouped > 0 ? `; ${n(stats.ungrouped)} record(s) past the group limit` : ''}`;
  $('group-rows').replaceChildren(...shown.map((group) => {
    const langs = Object.entries(group.langs).sort((a, b) => b[1] - a[1]).map(([lang, count]) => `${lang} ${n(count)}`).join(', ');
    const buttons = el('td', { class: 'buttons' });
    const show = el('button', { testid: 'group-filter' }, 'Show');
    show.addEventListener('click', (event) => {
      event.stopPropagation();
      filterByGroup(group);
    });
    buttons.append(show);
    if (!session.read_only) {
      const redrive = el('button', { testid: 'group-redrive' }, 'Redrive group…');
      redrive.addEventListener('click', (event) => {
        event.stopPropagation();
        void groupAction(group, 'redrive');
      });
      buttons.append(redrive);
      if (session.can.delete) {
        const remove = el('button', { class: 'danger', testid: 'group-delete' }, 'Delete group…');
        remove.addEventListener('click', (event) => {
          event.stopPropagation();
          void groupAction(group, 'delete');
        });
        buttons.append(remove);
      }
    }
    const tr = el('tr', { testid: 'group-row' },
      el('td', { class: 'mono' }, n(group.count)),
      el('td', { class: 'mono' }, group.urn ?? '—'),
      el('td', { class: 'mono' }, group.exception ?? '—'),
      el('td', { class: 'error', testid: 'group-error' }, group.error ?? '—'),
      el('td', { class: 'nowrap' }, time(group.first_failed_at)),
      el('td', { class: 'nowrap' }, time(group.last_failed_at)),
      el('td', { class: 'lang' }, langs),
      buttons,
    );
    tr.addEventListener('click', () => filterByGroup(group));
    return tr;
  }));
}

function describeGroup(group: Group): string {
  return `${group.urn ?? '(no URN)'} · ${group.exception ?? '(no exception)'} · ${group.error ?? '(no error)'}`;
}

function filterByGroup(group: Group): void {
  $<HTMLInputElement>('filter-group').value = group.id;
  $('group-chip-text').textContent = `group: ${describeGroup(group)}`;
  $('group-chip').hidden = false;
  resetView();
  void refresh();
}

/** Redrives or deletes one group through the bulk action with the group's filter, showing progress and then a result line. */
async function groupAction(group: Group, kind: 'redrive' | 'delete'): Promise<void> {
  const what = `the ${n(group.count)} record(s) of the group ${describeGroup(group)}`;
  const ok = kind === 'redrive'
    ? await confirmDialog(`Redrive this group (${n(group.count)})?`, `This moves ${what} off ${dlq}: ${describeTarget()}. Poison records stay.`)
    : await confirmDialog(`Delete this group (${n(group.count)})?`, `This removes ${what} from ${dlq} for good.`);
  if (!ok) return;
  const progress = $('group-progress');
  const result = $('group-result');
  result.hidden = true;
  progress.hidden = false;
  progress.textContent = `${kind === 'redrive' ? 'Redriving' : 'Deleting'} ${n(group.count)} record(s)…`;
  const started = Date.now();
  const poll = window.setInterval(() => void api<{ running: { removed: number; sent: number } | null }>(`/api/progress?${new URLSearchParams({ dlq })}`).then((p) => {
    if (p.running === null) return;
    const done = kind === 'redrive' ? p.running.sent : p.running.removed;
    progress.textContent = `${kind === 'redrive' ? 'Redriving' : 'Deleting'}: ${n(done)} of ${n(group.count)} done · ${Math.round((Date.now() - started) / 1000)} s`;
  }, () => undefined), 400);
  let line: string;
  try {
    const body = kind === 'redrive' ? { dlq, matching: { group: group.id }, ...redriveOptions() } : { dlq, matching: { group: group.id } };
    const done = await api<ActionResult>(kind === 'redrive' ? '/api/redrive' : '/api/delete', body);
    const counts = [
      kind === 'redrive' ? `${n(done.redriven)} redriven` : `${n(done.deleted)} deleted`,
      done.kept ? `${n(done.kept)} kept` : '',
      done.not_found ? `${n(done.not_found)} not found` : '',
    ].filter((p) => p !== '').join(', ');
    line = done.error
      ? `${kind} of the group stopped: ${done.error}. So far: ${counts}. Nothing was lost.`
      : `${kind === 'redrive' ? 'Redrove' : 'Deleted'} the group ${describeGroup(group)}: ${counts} in ${((Date.now() - started) / 1000).toFixed(1)} s${done.note ? ` · ${done.note}` : ''}`;
  } catch (error) {
    line = `${kind} of the group failed: ${(error as Error).message}`;
  }
  window.clearInterval(poll);
  progress.hidden = true;
  result.textContent = line;
  result.hidden = false;
  clearGroup(false);
  resetView(false);
  await Promise.all([refresh(), loadOverview()]);
}

function clearGroup(reload = true): void {
  $<HTMLInputElement>('filter-group').value = '';
  $('group-chip').hidden = true;
  if (reload) {
    resetView();
    void refresh();
  }
}

/** Every DLQ of the broker (configured, then discovered) with its depth; discovered ones join the tabs. */
async function loadOverview(): Promise<void> {
  try {
    const overview = await api<{ discovery: { supported: boolean; note?: string }; dlqs: { name: string; configured: boolean; depth: number | null }[]; total: number }>('/api/overview');
    for (const entry of overview.dlqs) {
      tabDepths.set(entry.name, entry.depth);
      if (!allDlqs.includes(entry.name)) allDlqs.push(entry.name);
    }
    renderTabs(tabDepths);
    const found = overview.dlqs.filter((d) => !d.configured).length;
    const head = `${n(overview.dlqs.length)} DLQ${overview.dlqs.length === 1 ? '' : 's'} on this broker, ${n(overview.total)} record(s) in all`;
    $('overview-line').textContent = overview.discovery.supported
      ? `${head} (${n(found)} found beside the ones named at start)${overview.discovery.note ? ` · ${overview.discovery.note}` : ''}`
      : `${head} · ${overview.discovery.note ?? 'this broker cannot list its queues'}`;
  } catch (error) {
    $('overview-line').textContent = `The overview failed: ${(error as Error).message}`;
  }
}

function wireFinding(): void {
  $('group-clear').addEventListener('click', () => clearGroup());
  window.addEventListener('hashchange', () => void openFromLink());
}

document.addEventListener('DOMContentLoaded', () => {
  start().catch((error: unknown) => showNotice(`The console could not start: ${(error as Error).message}`));
});
