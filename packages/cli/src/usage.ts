/** Options every command takes. */
const GLOBAL = `Global options:
  --url URL         broker URL (default: $BABELQUEUE_URL); publish, consume and dlq
                    need one: redis://, rediss://, amqp://, amqps://, kafka://, sqs://, pulsar://, ...
                    (demo alone defaults to memory://)
  --json            machine-readable output
  --timeout-ms MS   give up on a broker that does not answer (default 10000)
  -h, --help        show help`;

/** Usage text per command, shown with `--help` and after a usage error. */
export const USAGE = {
  main: `Usage: babelqueue <command> [options]

Commands:
  demo                          publish, handle, retry and dead-letter on the in-memory broker
  publish URN 'JSON-DATA'       publish one message; prints its meta.id
  consume                       print and acknowledge (remove) messages; --no-ack keeps them
  dlq list|show|redrive|purge   inspect and repair a dead-letter queue
  console                       the DLQ console: a web page to triage dead-letter queues
  redis legacy-cleanup          return stuck +inf reservations of a Redis legacy queue

${GLOBAL}

memory:// lives inside one process, so only demo runs on it: publish, consume and
dlq need a broker other processes share (--url redis://127.0.0.1:6379, or
BABELQUEUE_URL), and refuse memory:// with a usage error.
Exit codes: 0 ok, 1 operational error, 2 usage error.
Run "babelqueue <command> --help" for a command's options.`,

  demo: `Usage: babelqueue demo [--queue Q] [--url URL] [--json]

Publishes a few messages, handles them, fails one until it is dead-lettered
(max attempts 3) and shows the dead-letter record. Needs no broker.
  --queue Q         queue to use (default "orders")

${GLOBAL}`,

  publish: `Usage: babelqueue publish [--queue Q] URN 'JSON-DATA' [--trace-id T] [--delay-ms D]

Publishes one envelope and prints its meta.id.
  --queue Q         target queue (default "default")
  --trace-id T      continue an existing trace (default: a new UUID)
  --delay-ms D      deliver no earlier than D ms from now

${GLOBAL}`,

  consume: `Usage: babelqueue consume [--queue Q] [--max N] [--idle-ms MS] [--ack | --no-ack] [--health-port N [--health-host H]]
Acknowledges (removes from the queue) every message it prints, unless --no-ack.

Prints each delivered envelope (one JSON object per line with --json).
Without --max or --idle-ms it runs until interrupted (Ctrl-C).
  --queue Q         queue to read (default "default")
  --max N           stop after N messages
  --idle-ms MS      stop once nothing arrived for MS milliseconds
  --ack             acknowledge each message (default): it is removed
  --no-ack          leave every message for redelivery (they are held until the
                    command ends, then released; native delivery counts go up)
  --health-port N   serve GET /healthz (liveness) and /readyz (readiness: connected
                    and consuming) as JSON on port N while consuming (0: any free port)
  --health-host H   the address the probes listen on (default 127.0.0.1; in a
                    Kubernetes pod 0.0.0.0, as the kubelet probes the pod IP)

${GLOBAL}`,

  dlq: `Usage: babelqueue dlq <list|show|redrive|purge> [--queue Q | --dlq NAME] [options]

Works on the dead-letter queue <queue>.dlq (or --dlq NAME).
  list              records with reason, error, attempts, trace_id and meta.id
                      --max N          at most N records (default 100)
  show ID           one record, in full, by meta.id (or --id ID)
                      --max N          search the first N records (default 1000)
                    list and show refuse a RabbitMQ quorum queue: reading it takes
                    every record and puts it back, which counts a delivery, and at
                    its delivery limit RabbitMQ drops the record.
                      --allow-counted-reads   read anyway, at that cost
  redrive           send records back to their original queue, attempts reset
                    and dead_letter removed
                      --id ID          only this meta.id (repeatable)
                      --max N          take at most N records (default 0: all)
                      --to QUEUE       send to QUEUE instead
                      --dry-run        report what would happen; change nothing
                      --bypass         mark them as replays (bq-replay-bypass: 1)
                      --idle-ms MS     stop taking once the DLQ is quiet (default 1000)
  purge             delete every record (asks first; --yes to skip the question)

  --queue Q         the work queue whose DLQ to use (default "default")
  --dlq NAME        the dead-letter queue itself

${GLOBAL}`,

  console: `Usage: babelqueue console --url URL [--queue Q ...] [--dlq NAME ...] [--port 8794] [options]

Serves the DLQ console, a web page to browse, search, inspect, redrive, delete
and purge dead-lettered messages, on http://127.0.0.1:8794/ until Ctrl-C.
Needs the @babelqueue/console package.
  --queue Q         show the DLQ of work queue Q (repeatable; default "default")
  --dlq NAME        show this dead-letter queue (repeatable)
  --host H          address to listen on (default 127.0.0.1, this machine only);
                    any other needs --token or --basic-auth
  --port P          port (default 8794; 0 picks a free one)
  --read-only       show records; no redrive, delete or purge
  --token T         require a token (at least 16 characters; or
                    $BABELQUEUE_CONSOLE_TOKEN): open the printed URL with ?token=T
  --basic-auth U:P  require HTTP basic auth (or $BABELQUEUE_CONSOLE_BASIC_AUTH)
  --scan-limit N    records one page, search or bulk action reads at most
                    (default 100000)
  --scan-budget-ms MS
                    a page, search or chart answers after about MS with what it
                    scanned so far; the page carries on from there (default 1500)
  --allow-counted-reads
                    read DLQs where a read counts a delivery of every record
                    (a RabbitMQ quorum queue: at its delivery limit RabbitMQ drops
                    the record); refused without it
  --audit-log FILE  also append every redrive, delete and purge to FILE, one
                    JSON line each (always logged at info; the Audit page reads it)

Example:
  babelqueue console --url redis://127.0.0.1:6379 --queue orders --queue payments

${GLOBAL}`,

  redis: `Usage: babelqueue redis legacy-cleanup --queue Q --consumers-stopped [--url redis://...]

Redis legacy layout: returns the +inf reservations of Q (left by consumers that
ran with retryAfter null and stopped without settling) to the ready list, in one
atomic script, and prints how many were handled. Run it only while every
consumer of Q is stopped: a running consumer's messages would be delivered twice.
  --queue Q             the queue (required)
  --consumers-stopped   confirms every consumer of Q is stopped (required)

${GLOBAL}`,
} as const;

/** A command name with usage text. */
export type Command = keyof typeof USAGE;

/** The short form printed after a usage error: the synopsis lines and where to read more. */
export function shortUsage(command: Command): string {
  const text = USAGE[command];
  const synopsis = text.split('\n\n').slice(0, command === 'main' ? 2 : 1).join('\n\n');
  const more = command === 'main' ? 'babelqueue --help' : `babelqueue ${command} --help`;
  return `${synopsis}\nRun "${more}" for details.`;
}
