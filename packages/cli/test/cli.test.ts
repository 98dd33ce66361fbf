import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InMemoryTransport, transportFromUrl, type Transport } from '@babelqueue/core';
import { registerTransport } from '@babelqueue/core/binding';
import { main, type CliIo } from 'babelqueue';
import { jsonLines, memoryUrl, run } from './support/capture.js';

const URN = 'urn:babel:orders:created';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function pick(listing: Record<string, unknown>): Record<string, unknown> {
  return { count: listing.count, depth: listing.depth, partial: listing.partial };
}

async function memoryTransport(url: string): Promise<InMemoryTransport> {
  return (await transportFromUrl(url)) as InMemoryTransport;
}

describe('babelqueue publish / consume (in-process, one memory:// broker)', () => {
  test('publish prints meta.id; consume --json prints the envelope byte for byte and acknowledges it', async () => {
    const url = memoryUrl();
    const published = await run(['publish', '--url', url, '--queue', 'orders', URN, '{"order_id":1042}', '--trace-id', 'trace-1']);
    assert.equal(published.code, 0, published.err);
    const id = published.out.trim();
    assert.match(id, UUID);

    const broker = await memoryTransport(url);
    const body = broker.messages('orders')[0]!.toString('utf8');
    const consumed = await run(['consume', '--url', url, '--queue', 'orders', '--idle-ms', '50', '--json']);
    assert.equal(consumed.code, 0, consumed.err);
    assert.equal(consumed.out, `${body}\n`);
    const [envelope] = jsonLines(consumed.out);
    assert.equal(envelope!.meta.id, id);
    assert.equal(envelope!.trace_id, 'trace-1');
    assert.deepEqual(envelope!.data, { order_id: 1042 });
    assert.equal(consumed.err, '', '--json keeps stderr quiet');
    assert.deepEqual(broker.broker.stats('orders'), { ready: 0, delayed: 0, inFlight: 0 });
  });

  test('publish --json prints {id, urn, queue}; the default queue is "default"; BABELQUEUE_URL is read', async () => {
    const url = memoryUrl();
    const r = await run(['publish', URN, '{}', '--json'], { env: { BABELQUEUE_URL: url } });
    assert.equal(r.code, 0, r.err);
    const [out] = jsonLines(r.out);
    assert.match(out!.id, UUID);
    assert.deepEqual({ urn: out!.urn, queue: out!.queue }, { urn: URN, queue: 'default' });
    assert.equal((await memoryTransport(url)).messages('default').length, 1);
  });

  test('publish --delay-ms holds the message back', async () => {
    const url = memoryUrl();
    assert.equal((await run(['publish', '--url', url, '--delay-ms', '60000', URN, '{}'])).code, 0);
    assert.deepEqual((await memoryTransport(url)).broker.stats('default'), { ready: 0, delayed: 1, inFlight: 0 });
  });

  test('consume --no-ack shows each message once and leaves them all for redelivery', async () => {
    const url = memoryUrl();
    for (const n of [1, 2]) await run(['publish', '--url', url, URN, JSON.stringify({ n })]);
    const peek = await run(['consume', '--url', url, '--no-ack', '--idle-ms', '50', '--json']);
    assert.equal(peek.code, 0, peek.err);
    assert.deepEqual(jsonLines(peek.out).map((e) => e.data.n), [1, 2]);
    // Back for the next consumer (after the in-memory redelivery delay).
    const again = await run(['consume', '--url', url, '--max', '2', '--idle-ms', '30000', '--json']);
    assert.deepEqual(jsonLines(again.out).map((e) => e.data.n).sort(), [1, 2]);
  });

  test('consume --max stops after N; human output pretty-prints without touching numbers', async () => {
    const url = memoryUrl();
    const transport = await memoryTransport(url);
    const raw = '{"job":"urn:babel:t:x","trace_id":"t","data":{"big":12345678901234567890,"f":1.0,"s":"a\\"b"},"meta":{"id":"m1","queue":"q","lang":"go","schema_version":1,"created_at":1},"attempts":0}';
    await transport.publishRaw('q', Buffer.from(raw));
    await transport.publishRaw('q', Buffer.from('second'));
    const r = await run(['consume', '--url', url, '--queue', 'q', '--max', '1']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^--- #1 from q\n/);
    assert.match(r.out, /"big": 12345678901234567890,\n/);
    assert.match(r.out, /"f": 1\.0,\n/);
    assert.match(r.out, /"s": "a\\"b"\n/);
    assert.match(r.err, /1 message consumed \(q\)/);
    assert.equal(transport.messages('q').length, 1);
  });

  test('consume prints a body that is not JSON as base64 (--json) or as a size (human)', async () => {
    const url = memoryUrl();
    const transport = await memoryTransport(url);
    await transport.publishRaw('q', Buffer.from([0xff, 0x00]));
    await transport.publishRaw('q', Buffer.from([0xff, 0x00]));
    const json = await run(['consume', '--url', url, '--queue', 'q', '--max', '1', '--json']);
    assert.deepEqual(jsonLines(json.out), [{ raw: '/wA=', raw_encoding: 'base64' }]);
    const human = await run(['consume', '--url', url, '--queue', 'q', '--max', '1']);
    assert.match(human.out, /<not a JSON body: 2 bytes>/);
  });

  test('consume without limits runs until the signal aborts (Ctrl-C)', async () => {
    const url = memoryUrl();
    await run(['publish', '--url', url, URN, '{}']);
    const controller = new AbortController();
    // Ctrl-C once the message was printed, however long the start took.
    const r = await run(['consume', '--url', url, '--json'], { signal: controller.signal, onStdout: () => controller.abort() });
    assert.equal(r.code, 0, r.err);
    assert.equal(jsonLines(r.out).length, 1);
  });
});

describe('babelqueue dlq (in-process, after a demo on the same memory:// broker)', () => {
  async function withDeadLetter() {
    const url = memoryUrl();
    const demo = await run(['demo', '--url', url, '--json']);
    assert.equal(demo.code, 0, demo.err);
    const [report] = jsonLines(demo.out);
    return { url, report: report!, transport: await memoryTransport(url) };
  }

  test('the demo dead-letters the failing payment after 3 attempts and shows its record', async () => {
    const { report, transport } = await withDeadLetter();
    assert.equal(report.dlq, 'orders.dlq');
    assert.equal(report.published.length, 4);
    assert.deepEqual(report.deliveries.filter((d: any) => d.urn === 'urn:babel:payments:charge').map((d: any) => [d.attempt, d.outcome]),
      [[1, 'retry'], [2, 'retry'], [3, 'dead-lettered']]);
    assert.equal(report.deliveries.filter((d: any) => d.outcome === 'handled').length, 3);
    const [record] = report.dead_letters;
    assert.equal(record.dead_letter.reason, 'failed');
    assert.equal(record.dead_letter.error, 'Payment gateway timeout');
    assert.equal(record.dead_letter.exception, 'GatewayTimeout');
    assert.equal(record.dead_letter.attempts, 3);
    assert.equal(record.dead_letter.original_queue, 'orders');
    assert.equal(record.meta.id, report.published[2].id);
    assert.equal(transport.messages('orders').length, 0);
  });

  test('list shows reason, error, attempts, trace_id and meta.id (human and --json)', async () => {
    const { url, report } = await withDeadLetter();
    const record = report.dead_letters[0];
    const json = await run(['dlq', 'list', '--url', url, '--queue', 'orders', '--json']);
    assert.equal(json.code, 0, json.err);
    const [listing] = jsonLines(json.out);
    assert.equal(listing!.dlq, 'orders.dlq');
    assert.equal(listing!.count, 1);
    assert.deepEqual(listing!.records[0], {
      id: record.meta.id,
      job: 'urn:babel:payments:charge',
      trace_id: record.trace_id,
      reason: 'failed',
      error: 'Payment gateway timeout',
      exception: 'GatewayTimeout',
      attempts: 3,
      failed_at: record.dead_letter.failed_at,
      original_queue: 'orders',
    });
    const human = await run(['dlq', 'list', '--url', url, '--dlq', 'orders.dlq']);
    assert.match(human.out, /^META\.ID\s+REASON\s+ATTEMPTS\s+JOB\s+TRACE_ID\s+ERROR\n/);
    for (const text of [record.meta.id, 'failed', 'Payment gateway timeout', record.trace_id]) assert.ok(human.out.includes(text), text);
    assert.match(human.err, /1 record on orders\.dlq/);
  });

  test('list says when it shows part of the DLQ: the count beside the depth', async () => {
    const url = memoryUrl();
    const broker = await memoryTransport(url);
    for (let i = 0; i < 5; i++) await broker.publishRaw('orders.dlq', Buffer.from(`{"job":"urn:babel:t:x","trace_id":"t","data":{},"meta":{"id":"m-${i}","queue":"orders","lang":"go","schema_version":1,"created_at":1},"attempts":0}`));
    const json = await run(['dlq', 'list', '--url', url, '--queue', 'orders', '--max', '2', '--json']);
    assert.equal(json.code, 0, json.err);
    assert.deepEqual(pick(jsonLines(json.out)[0]!), { count: 2, depth: 5, partial: true });
    const whole = await run(['dlq', 'list', '--url', url, '--queue', 'orders', '--max', '5', '--json']);
    assert.deepEqual(pick(jsonLines(whole.out)[0]!), { count: 5, depth: 5, partial: false });
    const human = await run(['dlq', 'list', '--url', url, '--queue', 'orders', '--max', '2']);
    assert.match(human.err, /^2 of 5 records on orders\.dlq \(partial: the first 2; --max for more\)\n$/);
  });

  test('show prints one record in full by meta.id; an unknown id is exit 1', async () => {
    const { url, report, transport } = await withDeadLetter();
    const id = report.dead_letters[0].meta.id;
    const json = await run(['dlq', 'show', id, '--url', url, '--queue', 'orders', '--json']);
    assert.equal(json.code, 0, json.err);
    assert.equal(json.out, `${transport.messages('orders.dlq')[0]!.toString()}\n`);
    const human = await run(['dlq', 'show', '--id', id, '--url', url, '--queue', 'orders']);
    assert.deepEqual(JSON.parse(human.out), JSON.parse(json.out));
    const missing = await run(['dlq', 'show', 'nope', '--url', url, '--queue', 'orders']);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /no record with meta\.id nope/);
  });

  test('redrive: --dry-run changes nothing; --id selects; then the record goes back with attempts 0 and no dead_letter', async () => {
    const { url, report, transport } = await withDeadLetter();
    const id = report.dead_letters[0].meta.id;
    const before = transport.messages('orders.dlq')[0]!.toString();

    const dry = await run(['dlq', 'redrive', '--url', url, '--queue', 'orders', '--dry-run', '--idle-ms', '30', '--json']);
    assert.equal(dry.code, 0, dry.err);
    const [dryResult] = jsonLines(dry.out);
    assert.equal(dryResult!.dry_run, true);
    assert.deepEqual([dryResult!.redriven, dryResult!.skipped, dryResult!.items[0].to], [0, 1, 'orders']);
    assert.deepEqual(transport.messages('orders.dlq').map(String), [before]);

    const other = await run(['dlq', 'redrive', '--url', url, '--queue', 'orders', '--id', 'someone-else', '--idle-ms', '30']);
    assert.equal(other.code, 0, other.err);
    assert.equal(other.out, '', 'records not asked for are counted, not listed');
    assert.match(other.err, /0 redriven, 1 kept on orders\.dlq/);
    assert.match(other.err, /not found on orders\.dlq: someone-else/);
    assert.deepEqual(transport.messages('orders.dlq').map(String), [before]);

    const done = await run(['dlq', 'redrive', '--url', url, '--queue', 'orders', '--id', id, '--idle-ms', '30']);
    assert.equal(done.code, 0, done.err);
    assert.match(done.out, new RegExp(`^redriven  ${id}  urn:babel:payments:charge  → orders\\n$`));
    assert.match(done.err, /1 redriven, 0 kept on orders\.dlq/);
    assert.equal(transport.messages('orders.dlq').length, 0);
    const back = transport.messages('orders')[0]!.toString();
    assert.equal(back, before.replace(/"attempts":\d+,"dead_letter":\{[^}]*\}\}$/, '"attempts":0}'));
  });

  test('redrive --id lists the records it moved, not every record it kept', async () => {
    const { url, transport } = await withDeadLetter();
    for (let i = 0; i < 3; i += 1) assert.equal((await run(['demo', '--url', url, '--json'])).code, 0);
    const ids = transport.messages('orders.dlq').map((b) => JSON.parse(b.toString()).meta.id as string);
    assert.equal(ids.length, 4);
    const r = await run(['dlq', 'redrive', '--url', url, '--queue', 'orders', '--id', ids[1]!, '--id', ids[3]!, '--idle-ms', '30']);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.trimEnd().split('\n');
    assert.deepEqual(lines.map((l) => l.split(/\s+/)[0]), ['redriven', 'redriven']);
    assert.deepEqual(lines.map((l) => l.split(/\s+/)[1]).sort(), [ids[1], ids[3]].sort());
    assert.match(r.err, /2 redriven, 2 kept on orders\.dlq/);
    assert.equal(transport.messages('orders.dlq').length, 2);
  });

  test('redrive --to and --bypass', async () => {
    const { url, transport } = await withDeadLetter();
    const r = await run(['dlq', 'redrive', '--url', url, '--queue', 'orders', '--to', 'elsewhere', '--bypass', '--idle-ms', '30', '--json']);
    assert.equal(r.code, 0, r.err);
    assert.equal(jsonLines(r.out)[0]!.items[0].bypassed, true);
    assert.equal(transport.broker.ready('elsewhere')[0]?.headers['bq-replay-bypass'], '1');
  });

  test('redrive --to the DLQ being read is a usage error (exit 2): nothing moves', async () => {
    const { url, transport } = await withDeadLetter();
    const r = await run(['dlq', 'redrive', '--url', url, '--queue', 'orders', '--to', 'orders.dlq', '--idle-ms', '30']);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /--to orders\.dlq is the dead-letter queue being read/);
    assert.equal(transport.messages('orders.dlq').length, 1);
  });

  test('purge: refused without a terminal and without --yes (exit 2); asks on a terminal; --yes skips the question', async () => {
    const { url, transport } = await withDeadLetter();
    const refused = await run(['dlq', 'purge', '--url', url, '--queue', 'orders']);
    assert.equal(refused.code, 2);
    assert.match(refused.err, /--yes/);
    assert.equal(transport.messages('orders.dlq').length, 1);

    const declined = await run(['dlq', 'purge', '--url', url, '--queue', 'orders'], { interactive: true, answer: false });
    assert.equal(declined.code, 1);
    assert.deepEqual(declined.asked, [`Delete every record on orders.dlq (${url})?`]);
    assert.equal(transport.messages('orders.dlq').length, 1);

    const confirmed = await run(['dlq', 'purge', '--url', url, '--queue', 'orders'], { interactive: true, answer: true });
    assert.equal(confirmed.code, 0, confirmed.err);
    assert.equal(confirmed.out, 'purged 1 record from orders.dlq\n');

    await transport.publishRaw('orders.dlq', Buffer.from('x'));
    const yes = await run(['dlq', 'purge', '--url', url, '--queue', 'orders', '--yes', '--json']);
    assert.deepEqual(jsonLines(yes.out), [{ dlq: 'orders.dlq', purged: 1 }]);
    assert.equal(yes.asked.length, 0);
  });
});

describe('memory:// where no other process can see it', () => {
  // As the executable runs: nobody else shares this process's memory:// brokers.
  const alone = { sharesMemoryBrokers: false };
  const COMMANDS: [string, string[]][] = [
    ['dlq list', ['dlq', 'list']],
    ['dlq show', ['dlq', 'show', 'some-id']],
    ['dlq redrive', ['dlq', 'redrive']],
    ['dlq purge', ['dlq', 'purge', '--yes']],
    ['consume', ['consume']],
    ['publish', ['publish', URN, '{}']],
  ];
  for (const [name, argv] of COMMANDS) {
    test(`${name} refuses memory:// (defaulted, --url, BABELQUEUE_URL) with a usage error naming --url and BABELQUEUE_URL`, async () => {
      const defaulted = await run(argv, alone);
      assert.equal(defaulted.code, 2, defaulted.err);
      assert.match(defaulted.err, /^babelqueue: \w+ needs a broker: pass --url \(e\.g\. --url redis:\/\/127\.0\.0\.1:6379\) or set BABELQUEUE_URL\nUsage: babelqueue /);
      assert.equal(defaulted.out, '');

      const url = memoryUrl();
      const given = await run([...argv, '--url', url], alone);
      assert.equal(given.code, 2, given.err);
      assert.match(given.err, /^babelqueue: memory:\/\/ lives inside one process: .*Pass --url with a shared broker .* or set BABELQUEUE_URL\n/);
      const fromEnv = await run(argv, { ...alone, env: { BABELQUEUE_URL: url } });
      assert.equal(fromEnv.code, 2, fromEnv.err);
      assert.match(fromEnv.err, new RegExp(`^babelqueue: BABELQUEUE_URL is ${url}, but memory:// lives inside one process`));
      // Refused before touching the broker: nothing was published or taken.
      assert.deepEqual((await memoryTransport(url)).broker.stats('default'), { ready: 0, delayed: 0, inFlight: 0 });
    });
  }

  test('publish says the message would be lost; consume and dlq that they would see an empty broker', async () => {
    const url = memoryUrl();
    assert.match((await run(['publish', '--url', url, URN, '{}'], alone)).err, /the message would be gone when this command exits/);
    assert.match((await run(['dlq', 'list', '--url', url], alone)).err, /would only ever see a new, empty broker/);
  });

  test('demo keeps memory:// (its whole job runs in one process); --help needs no broker', async () => {
    const demo = await run(['demo', '--json'], alone);
    assert.equal(demo.code, 0, demo.err);
    assert.equal(jsonLines(demo.out)[0]!.dead_letters.length, 1);
    for (const argv of [['consume', '--help'], ['dlq', 'list', '--help'], ['publish', '--help']]) {
      assert.equal((await run(argv, alone)).code, 0, argv.join(' '));
    }
  });

  test('consume says in its first help line that it acknowledges (removes) what it prints', async () => {
    const [usage, first] = (await run(['consume', '--help'])).out.split('\n');
    assert.match(usage!, /^Usage: babelqueue consume /);
    assert.match(first!, /^Acknowledges \(removes from the queue\) every message it prints, unless --no-ack\.$/);
    assert.match((await run(['--help'])).out, /^ {2}consume +print and acknowledge \(remove\) messages; --no-ack keeps them$/m);
    // The short usage after a usage error carries it too.
    assert.match((await run(['consume', '--bogus'])).err, /\nAcknowledges \(removes from the queue\)/);
  });
});

describe('babelqueue usage and errors', () => {
  const USAGE_ERRORS: [string, string[], RegExp][] = [
    ['no command', [], /no command given/],
    ['unknown command', ['frobnicate'], /unknown command "frobnicate"/],
    ['publish without arguments', ['publish'], /needs a URN and the JSON data/],
    ['publish without data', ['publish', URN], /needs a URN and the JSON data/],
    ['publish with unquoted data', ['publish', URN, '{"a":', '1}'], /unexpected argument/],
    ['publish data not JSON', ['publish', URN, 'not json'], /not valid JSON/],
    ['publish data not an object', ['publish', URN, '[1]'], /must be a JSON object/],
    ['publish blank URN', ['publish', ' ', '{}'], /must not be blank/],
    ['publish bad delay', ['publish', '--delay-ms=-5', URN, '{}'], /--delay-ms must be an integer >= 0/],
    ['unknown option', ['consume', '--bogus'], /Unknown option '--bogus'$/m],
    ['unknown option close to a known one', ['consume', '--queu', 'orders'], /Unknown option '--queu' \(did you mean "--queue"\?\)$/m],
    ['dlq option misspelt', ['dlq', 'redrive', '--dry-rn'], /Unknown option '--dry-rn' \(did you mean "--dry-run"\?\)$/m],
    ['publish a job name that is not a URN', ['publish', 'orders.created', '{}'], /"orders\.created" is not a URN: a job name looks like urn:<namespace>:<context>:<event>, e\.g\. urn:babel:orders:created/],
    ['publish a URN with a blank part', ['publish', 'urn:babel:', '{}'], /is not a URN/],
    ['missing option value', ['consume', '--queue'], /Option '--queue <value>' argument missing$/m],
    ['option value that looks like an option', ['consume', '--max', '-1'], /Option '--max' argument is ambiguous$/m],
    ['consume --max 0', ['consume', '--max', '0'], /--max must be an integer >= 1/],
    ['consume --max x', ['consume', '--max', 'x'], /--max must be an integer >= 1, got "x"/],
    ['consume --ack --no-ack', ['consume', '--ack', '--no-ack'], /exclude each other/],
    ['consume positional', ['consume', 'orders'], /unexpected argument "orders"/],
    ['demo positional', ['demo', 'x'], /unexpected argument "x"/],
    ['bad timeout', ['demo', '--timeout-ms', '0'], /--timeout-ms must be an integer >= 1/],
    ['dlq without subcommand', ['dlq'], /needs a subcommand/],
    ['dlq unknown subcommand', ['dlq', 'drop'], /unknown dlq subcommand "drop"/],
    ['dlq show without id', ['dlq', 'show'], /needs the record's meta\.id/],
    ['dlq show id twice', ['dlq', 'show', 'a', '--id', 'b'], /give the id once/],
    ['dlq list extra', ['dlq', 'list', 'extra'], /unexpected argument "extra"/],
    ['dlq --queue and --dlq', ['dlq', 'list', '--queue', 'a', '--dlq', 'b'], /not both/],
    ['dlq redrive blank --to', ['dlq', 'redrive', '--to', ' '], /--to needs a queue name/],
    ['dlq option of another subcommand', ['dlq', 'list', '--yes'], /Unknown option '--yes'/],
    ['not a URL', ['publish', '--url', 'not a url', URN, '{}'], /--url is not a URL/],
  ];
  for (const [name, argv, message] of USAGE_ERRORS) {
    test(`usage error, exit 2: ${name}`, async () => {
      const r = await run(argv, { env: { BABELQUEUE_URL: memoryUrl() } });
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, message);
      assert.match(r.err, /Usage: babelqueue/);
      assert.match(r.err, /--help" for details/);
      assert.equal(r.out, '');
    });
  }

  test('usage errors are one JSON line on stderr with --json', async () => {
    const r = await run(['consume', '--max', 'x', '--json']);
    assert.equal(r.code, 2);
    assert.deepEqual(jsonLines(r.err), [{ error: '--max must be an integer >= 1, got "x"', exit: 2 }]);
  });

  test('--help on every command, help <command> and --version exit 0 on stdout', async () => {
    for (const argv of [['--help'], ['-h'], ['help'], ['help', 'dlq'], ['demo', '--help'], ['publish', '-h'], ['consume', '--help'], ['dlq', '--help'], ['dlq', 'redrive', '--help']]) {
      const r = await run(argv);
      assert.equal(r.code, 0, argv.join(' '));
      assert.match(r.out, /^Usage: babelqueue/, argv.join(' '));
      assert.equal(r.err, '');
    }
    const main = await run(['--help']);
    assert.match(main.out, /memory:\/\/ lives inside one process/);
    const version = await run(['--version']);
    assert.match(version.out, /^\d+\.\d+\.\d+\n$/);
  });

  test('an unknown scheme is exit 1 saying so, credentials never printed', async () => {
    const unknown = await run(['dlq', 'list', '--url', 'gopher://u:topsecret@host']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /no transport is known for "gopher:\/\/"/);
    assert.ok(!unknown.err.includes('topsecret'), "!unknown.err.includes('topsecret')");
  });

  test('a broker error is exit 1, one line naming the masked URL, its credentials scrubbed from the message', async () => {
    registerTransport('failing', (raw) => stub({
      publish: async () => {
        const url = new URL(raw);
        throw new Error(`AUTH failed for ${url.username}:${decodeURIComponent(url.password)} at ${url.host}`);
      },
    }));
    const r = await run(['publish', '--url', 'failing://ops:p%40ss@broker.internal:1234', URN, '{}']);
    assert.equal(r.code, 1);
    assert.equal(r.err, 'babelqueue: publish failed on failing://ops:***@broker.internal:1234: AUTH failed for ops:*** at broker.internal:1234\n');
    const json = await run(['publish', '--json', '--url', 'failing://ops:p%40ss@broker.internal:1234', URN, '{}']);
    assert.deepEqual(jsonLines(json.err), [{ error: 'publish failed on failing://ops:***@broker.internal:1234: AUTH failed for ops:*** at broker.internal:1234', exit: 1 }]);
  });

  test('an error without a message is named by its code', async () => {
    registerTransport('refusing', () => stub({
      publish: async () => {
        throw Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' });
      },
    }));
    const r = await run(['publish', '--url', 'refusing://127.0.0.1:1', URN, '{}']);
    assert.equal(r.err, 'babelqueue: publish failed on refusing://127.0.0.1:1: ECONNREFUSED\n');
  });

  test('a broker that never answers is exit 1 after --timeout-ms, naming the masked URL', async () => {
    registerTransport('silent', () => stub({ publish: () => new Promise<void>(() => undefined) }));
    const r = await run(['publish', '--url', 'silent://u:hunter2@10.0.0.1:5', '--timeout-ms', '50', URN, '{}']);
    assert.equal(r.code, 1);
    assert.equal(r.err, 'babelqueue: publish: no answer from silent://u:***@10.0.0.1:5 within 50 ms (is the broker running?)\n');
  });

  test('the demo refuses a transport that cannot retry (Kafka without retry tiers)', async () => {
    registerTransport('noretry', () => ({ ...stub({}), capabilities: { delayedPublish: false, delayedRetry: false, retry: false, headers: true } }));
    const r = await run(['demo', '--url', 'noretry://h']);
    assert.equal(r.code, 1);
    assert.match(r.err, /cannot retry a failed message.*retryTiersMs=default/);
  });

  test('dlq list / show / purge say so when the binding cannot read (no scan) or purge', async () => {
    registerTransport('plain', () => stub({}));
    for (const argv of [['dlq', 'list'], ['dlq', 'show', 'x'], ['dlq', 'purge', '--yes']]) {
      const r = await run([...argv, '--url', 'plain://h', '--queue', 'orders']);
      assert.equal(r.code, 1, argv.join(' '));
      assert.match(r.err, /the plain (binding cannot read a queue without consuming it|transport cannot purge a queue)/);
    }
  });

  test('a binding that fails to build its transport is exit 1, one line, no stack', async () => {
    registerTransport('buggy', () => {
      throw new TypeError('cannot read properties of undefined');
    });
    const r = await run(['publish', '--url', 'buggy://h', URN, '{}']);
    assert.equal(r.code, 1);
    assert.equal(r.err, 'babelqueue: cannot read properties of undefined\n');
  });

  test('an unexpected error is exit 1 and named; its stack only with BABELQUEUE_DEBUG', async () => {
    for (const debug of [false, true]) {
      let err = '';
      const io: CliIo = {
        stdout: () => {
          throw new Error('write EPIPE');
        },
        stderr: (text) => (err += text),
        env: debug ? { BABELQUEUE_DEBUG: '1' } : {},
        interactive: false,
        confirm: async () => false,
      };
      assert.equal(await main(['--help'], io), 1);
      assert.match(err, /^babelqueue: unexpected Error: write EPIPE\n/);
      assert.equal(/\n\s+at /.test(err), debug);
    }
  });
});

/** A transport with only what a test gives it (no browse, purge or publishRaw unless given). */
function stub(parts: Partial<Transport>): Transport {
  const memory = new InMemoryTransport();
  return {
    rules: { ...memory.rules, name: 'plain' },
    capabilities: memory.capabilities,
    target: 'plain://h',
    connect: async () => undefined,
    publish: async () => undefined,
    consume: async () => undefined,
    close: async () => undefined,
    ...parts,
  };
}
