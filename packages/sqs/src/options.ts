import type { SQSClient, SQSClientConfig } from '@aws-sdk/client-sqs';
import { ConfigurationError, type Logger } from '@babelqueue/core';

/** SQS's longest long poll. */
export const MAX_WAIT_TIME_SECONDS = 20;
/** SQS's longest visibility timeout (12 hours). */
export const MAX_VISIBILITY_SECONDS = 43_200;
/** SQS's longest per-message delay (`DelaySeconds`). */
export const MAX_DELAY_SECONDS = 900;
/** How long a request may go unanswered by default (a long poll is answered within 20 s). */
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const DEFAULT_MISSING_QUEUE_GRACE_MS = 30_000;
/** A request time-out must leave a long poll this much room beyond its wait. */
const LONG_POLL_MARGIN_MS = 5_000;
/** SQS's message size ceiling, and the default when a queue does not report `MaximumMessageSize`. */
export const DEFAULT_MAX_MESSAGE_BYTES = 1_048_576;

/** Options of {@link SqsTransport}. */
export interface SqsTransportOptions {
  /** AWS region; default the URL's host, else the standard AWS chain (`AWS_REGION`, profile). */
  readonly region?: string;
  /** Endpoint of an SQS-compatible server (ElasticMQ, LocalStack); default AWS's. */
  readonly endpoint?: string;
  /** Static credentials or a provider; default the standard AWS chain (environment, profile, SSO, instance role). */
  readonly credentials?: SQSClientConfig['credentials'];
  /** Any other `SQSClient` setting (retries, HTTP handler, …); `region`, `endpoint` and `credentials` above win. */
  readonly clientConfig?: SQSClientConfig;
  /** A client of your own. It is used as is (the settings above are ignored) and not destroyed by `close()`. */
  readonly client?: SQSClient;
  /** Queue URLs are `<prefix>/<name>` instead of asked for with `GetQueueUrl` (URL `prefix=`). */
  readonly queueUrlPrefix?: string;
  /**
   * Create a queue that does not exist (FIFO when its name ends in `.fifo`)
   * instead of failing with `QueueNotFoundError` (URL `create_queues=1`). The
   * queue is created without a RedrivePolicy. Default false.
   */
  readonly createQueues?: boolean;
  /** Treat every queue as FIFO (URL `fifo=1`). Default: a queue is FIFO when its name ends in `.fifo`. */
  readonly fifo?: boolean;
  /** `MessageGroupId` of FIFO publishes (URL `group_id=`); default the queue name. A publish's `key` overrides it. */
  readonly messageGroupId?: string;
  /**
   * Whether FIFO queues deduplicate by content (URL `content_dedup=1`): then no
   * `MessageDeduplicationId` is sent. Default: the queue's own
   * `ContentBasedDeduplication` attribute.
   */
  readonly contentBasedDeduplication?: boolean;
  /** Long-poll wait of each receive, 0–20 s (URL `wait_time=`). Default 20. */
  readonly waitTimeSeconds?: number;
  /**
   * Whether a graceful stop waits for the long poll in flight (up to
   * `waitTimeSeconds`, logged as it starts) and hands over what it brought.
   * Default true: waiting costs no message anything. `false` (URL
   * `stop_waits_for_poll=0`) cancels the poll so an idle worker stops at once,
   * but SQS keeps the cancelled receive open for the rest of its wait, and a
   * message that arrives in that time is given to it: it comes back only after
   * the visibility timeout with one receive (an attempt) counted.
   */
  readonly stopWaitsForPoll?: boolean;
  /**
   * The visibility timeout every receive asks for, 1–43200 s (URL
   * `visibility_timeout=`): the reservation. A heartbeat renews it every third
   * of that while the handler runs. Default 30.
   */
  readonly visibilityTimeoutSeconds?: number;
  /**
   * A request the endpoint has not answered within this many ms (connect
   * included) is abandoned, and the SDK's retry policy tries it again; without
   * it, an endpoint that takes the connection and stays silent holds a publish
   * or a poll for the SDK's 15-minute socket time-out. At least the long poll
   * plus 5 s (`waitTimeSeconds` × 1000 + 5000). Default 30,000. Set on the
   * binding's own HTTP handler: with `clientConfig.requestHandler` it is
   * refused (set the time-out there), with `client` it does not apply.
   */
  readonly requestTimeoutMs?: number;
  /**
   * How long a running consumer keeps polling a queue that answers
   * `QueueDoesNotExist`, in ms, before it fails with that error. An SQS server
   * answers so for a moment while its queue is restored (ElasticMQ restarting on
   * its file), and SQS itself just after a queue is created; a queue deleted
   * for good fails the consumer after this. Start-up never waits: a missing
   * queue there is a `QueueNotFoundError` at once. Default 30,000; 0 fails at
   * the first such answer.
   */
  readonly missingQueueGraceMs?: number;
  /** Largest message (body plus attributes) to send, in bytes. Default the queue's `MaximumMessageSize`, else 1 MiB. */
  readonly maxMessageBytes?: number;
  /**
   * Let `browse` and `remove` read any queue (URL `browse_work_queues=1`).
   * Default false: they read only dead-letter queues (`<queue>-dlq`,
   * `<queue>-dlq.fifo`) and refuse any other with `WorkQueueBrowseError`,
   * because SQS reads a message only by receiving it, and every receive counts
   * in `ApproximateReceiveCount`, which consumers read as attempts.
   */
  readonly browseWorkQueues?: boolean;
  /** pino-compatible logger; default the core's `consoleLogger()`. Bodies and credentials are never logged. */
  readonly logger?: Logger;
}

/** The options with every default filled in. */
export interface ResolvedOptions {
  readonly region: string | undefined;
  readonly endpoint: string | undefined;
  readonly queueUrlPrefix: string | undefined;
  readonly createQueues: boolean;
  readonly fifo: boolean;
  readonly messageGroupId: string | undefined;
  readonly contentBasedDeduplication: boolean | undefined;
  readonly waitTimeSeconds: number;
  readonly stopWaitsForPoll: boolean;
  readonly visibilityTimeoutSeconds: number;
  readonly requestTimeoutMs: number;
  readonly maxMessageBytes: number | undefined;
  readonly missingQueueGraceMs: number;
  readonly browseWorkQueues: boolean;
  readonly logger: Logger;
}

const KEYS = new Set([
  'region', 'endpoint', 'credentials', 'clientConfig', 'client', 'queueUrlPrefix', 'createQueues', 'fifo',
  'messageGroupId', 'contentBasedDeduplication', 'waitTimeSeconds', 'stopWaitsForPoll', 'visibilityTimeoutSeconds', 'requestTimeoutMs', 'maxMessageBytes', 'missingQueueGraceMs', 'browseWorkQueues', 'logger',
]);

/** Checks every option (unknown keys refused, so a plain-JavaScript typo fails at once) and fills in the defaults. */
export function resolveOptions(options: SqsTransportOptions, logger: Logger): ResolvedOptions {
  for (const key of Object.keys(options)) {
    if (!KEYS.has(key)) throw new ConfigurationError(`unknown SqsTransport option "${key}"`);
  }
  const waitTimeSeconds = integerIn('waitTimeSeconds', options.waitTimeSeconds ?? MAX_WAIT_TIME_SECONDS, 0, MAX_WAIT_TIME_SECONDS);
  const visibilityTimeoutSeconds = integerIn('visibilityTimeoutSeconds', options.visibilityTimeoutSeconds ?? 30, 1, MAX_VISIBILITY_SECONDS);
  const shortest = waitTimeSeconds * 1000 + LONG_POLL_MARGIN_MS;
  const requestTimeoutMs = integerIn('requestTimeoutMs', options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, shortest, 2 ** 31 - 1);
  if (options.requestTimeoutMs !== undefined && options.clientConfig?.requestHandler !== undefined) {
    throw new ConfigurationError('requestTimeoutMs is set on the binding\'s own HTTP handler; with clientConfig.requestHandler, set the time-out on that handler');
  }
  const maxMessageBytes = options.maxMessageBytes === undefined
    ? undefined
    : integerIn('maxMessageBytes', options.maxMessageBytes, 1, Number.MAX_SAFE_INTEGER);
  return {
    region: text('region', options.region),
    endpoint: text('endpoint', options.endpoint),
    queueUrlPrefix: text('queueUrlPrefix', options.queueUrlPrefix),
    createQueues: options.createQueues ?? false,
    fifo: options.fifo ?? false,
    messageGroupId: text('messageGroupId', options.messageGroupId),
    contentBasedDeduplication: options.contentBasedDeduplication,
    waitTimeSeconds,
    stopWaitsForPoll: options.stopWaitsForPoll ?? true,
    visibilityTimeoutSeconds,
    requestTimeoutMs,
    maxMessageBytes,
    missingQueueGraceMs: integerIn('missingQueueGraceMs', options.missingQueueGraceMs ?? DEFAULT_MISSING_QUEUE_GRACE_MS, 0, 2 ** 31 - 1),
    browseWorkQueues: options.browseWorkQueues ?? false,
    logger,
  };
}

function integerIn(name: string, value: number, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ConfigurationError(`${name} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

function text(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw new ConfigurationError(`${name} must be a non-blank string, got ${JSON.stringify(value)}`);
  return value;
}
