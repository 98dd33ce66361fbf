import { CannotReadError, CountedReadError, deadLetterReader, dlqName, redrive, type DeadLetterListing, type Transport } from '@babelqueue/core';
import { parse, splitCommand, type Args } from '../args.js';
import { withBroker, type Broker } from '../broker.js';
import { OperationalError, UsageError } from '../errors.js';
import { bodyLine, clip, columns, field, jsonLine, parseBody, prettyJson } from '../format.js';
import type { CliIo } from '../io.js';
import { USAGE } from '../usage.js';

const COMMON = { queue: { type: 'string' }, dlq: { type: 'string' } } as const;

const SUBCOMMANDS = {
  list: { options: { ...COMMON, max: { type: 'string' }, 'allow-counted-reads': { type: 'boolean' } }, run: list },
  show: { options: { ...COMMON, id: { type: 'string' }, max: { type: 'string' }, 'allow-counted-reads': { type: 'boolean' } }, run: show },
  redrive: {
    options: {
      ...COMMON,
      id: { type: 'string', multiple: true },
      max: { type: 'string' },
      to: { type: 'string' },
      'dry-run': { type: 'boolean' },
      bypass: { type: 'boolean' },
      'idle-ms': { type: 'string' },
    },
    run: redriveCommand,
  },
  purge: { options: { ...COMMON, yes: { type: 'boolean', short: 'y' } }, run: purge },
} as const;

type Sub = keyof typeof SUBCOMMANDS;

/** `babelqueue dlq list|show|redrive|purge`: inspect and repair `<queue>.dlq`. */
export async function dlq(args: readonly string[], io: CliIo): Promise<number> {
  const { command: name, rest } = splitCommand(args);
  if (name === undefined || !Object.hasOwn(SUBCOMMANDS, name)) {
    if (name === undefined && (rest.includes('--help') || rest.includes('-h'))) {
      io.stdout(`${USAGE.dlq}\n`);
      return 0;
    }
    throw new UsageError(name === undefined ? 'dlq needs a subcommand: list, show, redrive or purge' : `unknown dlq subcommand "${name}"`, 'dlq');
  }
  const sub = SUBCOMMANDS[name as Sub];
  const cli = parse('dlq', rest, sub.options, io);
  if (cli.help) {
    io.stdout(`${USAGE.dlq}\n`);
    return 0;
  }
  if (cli.string('queue') !== undefined && cli.string('dlq') !== undefined) {
    throw new UsageError('give --queue (the work queue) or --dlq (the DLQ itself), not both', 'dlq');
  }
  const positionalLimit = name === 'show' ? 1 : 0;
  if (cli.positionals.length > positionalLimit) throw new UsageError(`unexpected argument "${cli.positionals[positionalLimit]}"`, 'dlq');
  return sub.run(cli, io);
}

/** The DLQ to work on: `--dlq`, else the binding's name for `<queue>`'s DLQ (`.dlq`; `-dlq` on SQS). */
function dlqOf(cli: Args, transport: Transport): string {
  const explicit = cli.string('dlq');
  if (explicit !== undefined) return explicit;
  const queue = cli.string('queue') ?? 'default';
  return transport.rules.dlqName ? transport.rules.dlqName(queue, undefined) : dlqName(queue);
}

/**
 * The first `max` records of `dlq` through the core's dead-letter reader (the
 * console's too): the binding's scan, read to the end or to `max`, beside the
 * broker's count, so a listing shorter than the DLQ says it is partial.
 */
async function listOf(broker: Broker, dlq: string, cli: Args, max: number): Promise<DeadLetterListing> {
  const reader = deadLetterReader(broker.transport, { allowCountedReads: cli.flag('allow-counted-reads') });
  return broker.call(`read ${dlq}`, reader.list(dlq, max).catch((error: unknown) => {
    if (error instanceof CannotReadError) throw new OperationalError(`${error.message}; read it with "babelqueue consume --queue ${dlq} --no-ack"`);
    // The binding's own words say what a read would cost; the flag is the CLI's.
    if (error instanceof CountedReadError) throw new OperationalError(error.message.replace(/allowCountedReads \(.*\)$/, '--allow-counted-reads'));
    throw error;
  }));
}

/** The summary of one record (list). */
function summary(body: Buffer) {
  const record = parseBody(body);
  const block = (record as { dead_letter?: Record<string, unknown> } | undefined)?.dead_letter ?? {};
  return {
    id: field(record, 'meta.id'),
    job: field(record, 'job') || field(record, 'urn'),
    trace_id: field(record, 'trace_id'),
    reason: typeof block.reason === 'string' ? block.reason : record === undefined ? 'not JSON' : '',
    error: typeof block.error === 'string' ? block.error : null,
    exception: typeof block.exception === 'string' ? block.exception : null,
    attempts: typeof block.attempts === 'number' ? block.attempts : null,
    failed_at: typeof block.failed_at === 'number' ? block.failed_at : null,
    original_queue: typeof block.original_queue === 'string' ? block.original_queue : null,
  };
}

async function list(cli: Args, io: CliIo): Promise<number> {
  const max = cli.integer('max', 1) ?? 100;
  return withBroker('dlq', cli.global, async (broker) => {
    const dlq = dlqOf(cli, broker.transport);
    const listing = await listOf(broker, dlq, cli, max);
    const records = listing.records.map((r) => summary(r.body));
    const { depth, partial } = listing;
    if (cli.global.json) {
      io.stdout(jsonLine({ dlq, count: records.length, depth, partial, records }));
      return 0;
    }
    if (records.length === 0 && !partial) {
      io.stdout(`${dlq} is empty\n`);
      return 0;
    }
    if (records.length > 0) {
      io.stdout(columns([
        ['META.ID', 'REASON', 'ATTEMPTS', 'JOB', 'TRACE_ID', 'ERROR'],
        ...records.map((r) => [r.id || '-', r.reason || '-', r.attempts === null ? '-' : String(r.attempts), r.job || '-', r.trace_id || '-', clip(r.error ?? '-', 60)]),
      ]));
    }
    const shown = `${records.length}${depth !== null && partial ? ` of ${depth}` : ''} record${records.length === 1 && !partial ? '' : 's'}`;
    const why = records.length === max
      ? `the first ${records.length}; --max for more`
      : 'the broker counts more than could be read: records held by a consumer or an earlier action come back when their lock lapses; run it again';
    io.stderr(`${shown} on ${dlq}${partial ? ` (partial: ${why})` : ''}\n`);
    return 0;
  });
}

async function show(cli: Args, io: CliIo): Promise<number> {
  const id = cli.string('id') ?? cli.positionals[0];
  if (id === undefined || id.trim() === '') throw new UsageError('dlq show needs the record\'s meta.id (dlq show ID, or --id ID)', 'dlq');
  if (cli.string('id') !== undefined && cli.positionals.length > 0) throw new UsageError('give the id once (ID or --id ID)', 'dlq');
  const max = cli.integer('max', 1) ?? 1000;
  return withBroker('dlq', cli.global, async (broker) => {
    const dlq = dlqOf(cli, broker.transport);
    const body = (await listOf(broker, dlq, cli, max)).records.map((r) => r.body).find((b) => field(parseBody(b), 'meta.id') === id);
    if (body === undefined) throw new OperationalError(`no record with meta.id ${id} among the first ${max} records of ${dlq}`);
    io.stdout(cli.global.json ? `${bodyLine(body)}\n` : `${prettyJson(body.toString('utf8'))}\n`);
    return 0;
  });
}

async function redriveCommand(cli: Args, io: CliIo): Promise<number> {
  const ids = cli.strings('id');
  const max = cli.integer('max') ?? 0;
  const idleMs = cli.integer('idle-ms') ?? 1000;
  const toQueue = cli.string('to');
  if (toQueue !== undefined && toQueue.trim() === '') throw new UsageError('--to needs a queue name', 'dlq');
  const dryRun = cli.flag('dry-run');
  const bypass = cli.flag('bypass');
  return withBroker('dlq', cli.global, async (broker) => {
    const from = dlqOf(cli, broker.transport);
    if (toQueue === from) throw new UsageError(`--to ${toQueue} is the dead-letter queue being read: the records would only loop back`, 'dlq');
    const result = await redrive(broker.transport, {
      from,
      max,
      idleMs,
      dryRun,
      bypass,
      ...(toQueue !== undefined ? { toQueue } : {}),
      ...(ids.length > 0 ? { select: (env) => ids.includes(env.meta.id) } : {}),
    });
    if (cli.global.json) {
      io.stdout(jsonLine({ dlq: from, dry_run: dryRun, ...result }));
      return 0;
    }
    // With --id, the records not asked for stay out of the listing (the summary counts them):
    // a DLQ of 10,000 records must not print 10,000 "kept" lines to move two.
    const shown = ids.length > 0 ? result.items.filter((item) => ids.includes(item.messageId)) : result.items;
    io.stdout(columns(shown.map((item) => [
      item.redriven ? 'redriven' : dryRun && item.to !== '' ? 'would redrive' : item.reason === 'version_gate' ? 'kept (version-gated)' : 'kept',
      item.messageId || '-',
      item.urn || (item.reason === 'poison' ? '(poison record)' : '(not an envelope)'),
      item.to === '' ? '' : `→ ${item.to}${item.bypassed ? ' (replay)' : ''}`,
    ])));
    const would = result.items.filter((i) => !i.redriven && i.to !== '').length;
    io.stderr(dryRun
      ? `dry run: ${would} would be redriven, ${result.skipped - would} kept; nothing changed on ${from}\n`
      : `${result.redriven} redriven, ${result.skipped} kept on ${from}\n`);
    if (ids.length > 0) {
      const found = new Set(result.items.map((i) => i.messageId));
      const missing = ids.filter((id) => !found.has(id));
      const locked = missing.length > 0 ? await lockedOf(broker, from, missing) : new Map<string, number>();
      for (const [id, seconds] of locked) io.stderr(`${id} on ${from}: locked by another receiver, try again in ${seconds} s\n`);
      const gone = missing.filter((id) => !locked.has(id));
      if (gone.length > 0) io.stderr(`not found on ${from}: ${gone.join(', ')}\n`);
    }
    return 0;
  });
}

/**
 * Of the asked-for records a redrive did not get, those the broker shows
 * locked by another receiver (a Service Bus peek-lock), each with the seconds
 * until its lock lapses: "locked, try again", not "not found". A binding that
 * cannot read without consuming shows none.
 */
async function lockedOf(broker: Broker, dlq: string, ids: readonly string[]): Promise<Map<string, number>> {
  const locked = new Map<string, number>();
  const reader = deadLetterReader(broker.transport);
  if (reader.mode === 'none') return locked;
  const now = Date.now();
  for await (const record of reader.read(dlq)) {
    const id = field(parseBody(record.body), 'meta.id');
    if (record.lockedUntil !== undefined && record.lockedUntil > now && ids.includes(id)) locked.set(id, Math.ceil((record.lockedUntil - now) / 1000));
  }
  return locked;
}

async function purge(cli: Args, io: CliIo): Promise<number> {
  if (!cli.flag('yes') && !io.interactive) {
    throw new UsageError('purge deletes every record: confirm with --yes (there is no terminal to ask on)', 'dlq');
  }
  return withBroker('dlq', cli.global, async (broker) => {
    const { transport } = broker;
    const dlq = dlqOf(cli, transport);
    if (typeof transport.purge !== 'function') {
      throw new OperationalError(`the ${transport.rules.name} transport cannot purge a queue`);
    }
    if (!cli.flag('yes') && !(await io.confirm(`Delete every record on ${dlq} (${broker.where})?`))) {
      io.stderr('purge cancelled; nothing deleted\n');
      return 1;
    }
    const count = await broker.call(`purge ${dlq}`, transport.purge(dlq));
    io.stdout(cli.global.json ? jsonLine({ dlq, purged: count }) : `purged ${count} record${count === 1 ? '' : 's'} from ${dlq}\n`);
    return 0;
  });
}
