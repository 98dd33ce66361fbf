import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type QueueAttributeName,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { describe, isAccessDenied, isQueueMissing } from './aws-errors.js';
import { QueueNotFoundError } from './errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES, type ResolvedOptions } from './options.js';

/** What the binding needs to know about one queue. */
export interface QueueInfo {
  /** The queue's name, as the App names it. */
  readonly name: string;
  readonly url: string;
  /** FIFO: publishes carry `MessageGroupId` (and a deduplication id), per-message delays are refused. */
  readonly fifo: boolean;
  /** FIFO only: SQS deduplicates by content, so no `MessageDeduplicationId` is sent. */
  readonly contentBasedDeduplication: boolean;
  /** The largest message (body and attributes) the queue takes. */
  readonly maxMessageBytes: number;
  /** Whether the queue has a RedrivePolicy (SQS's own dead-letter queue); undefined when its attributes could not be read. */
  readonly redrivePolicy: boolean | undefined;
}

const ATTRIBUTES: QueueAttributeName[] = ['FifoQueue', 'ContentBasedDeduplication', 'MaximumMessageSize', 'RedrivePolicy'];

/**
 * Queue names to URLs and attributes, each asked for once and remembered:
 * the URL from `<prefix>/<name>` or `GetQueueUrl`, the FIFO flag, content
 * deduplication and maximum size from `GetQueueAttributes` (options win). A
 * queue that is missing fails with {@link QueueNotFoundError}, or is created
 * with `createQueues`.
 */
export class QueueDirectory {
  private readonly known = new Map<string, Promise<QueueInfo>>();

  constructor(private readonly client: SQSClient, private readonly options: ResolvedOptions) {}

  /** The queue's URL and attributes; `create` (default the `createQueues` option) creates a missing queue. */
  get(name: string, create = this.options.createQueues): Promise<QueueInfo> {
    let found = this.known.get(name);
    if (found === undefined) {
      found = this.lookUp(name, create);
      this.known.set(name, found);
      // A failed look-up is asked again next time (the queue may be created meanwhile).
      found.catch(() => this.known.delete(name));
    }
    return found;
  }

  /** Forgets a queue that turned out to be gone (deleted after it was looked up). */
  forget(name: string): void {
    this.known.delete(name);
  }

  private async lookUp(name: string, create: boolean): Promise<QueueInfo> {
    const url = await this.url(name, create);
    const read = await this.attributes(name, url, create);
    const attributes = read ?? {};
    const fifo = this.options.fifo || name.endsWith('.fifo') || attributes.FifoQueue === 'true';
    const reported = Number(attributes.MaximumMessageSize);
    return {
      name,
      url,
      fifo,
      contentBasedDeduplication: fifo && (this.options.contentBasedDeduplication ?? attributes.ContentBasedDeduplication === 'true'),
      maxMessageBytes: this.options.maxMessageBytes ?? (Number.isSafeInteger(reported) && reported > 0 ? reported : DEFAULT_MAX_MESSAGE_BYTES),
      redrivePolicy: read === undefined ? undefined : (attributes.RedrivePolicy ?? '').trim() !== '',
    };
  }

  private async url(name: string, create: boolean): Promise<string> {
    if (this.options.queueUrlPrefix !== undefined) return `${this.options.queueUrlPrefix.replace(/\/+$/, '')}/${name}`;
    try {
      return (await this.client.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl!;
    } catch (error) {
      if (!isQueueMissing(error)) throw error;
      if (!create) throw new QueueNotFoundError(name, { cause: error });
      return this.create(name);
    }
  }

  private async create(name: string): Promise<string> {
    const fifo = this.options.fifo || name.endsWith('.fifo');
    const { QueueUrl } = await this.client.send(new CreateQueueCommand({
      QueueName: name,
      ...(fifo ? { Attributes: { FifoQueue: 'true' } } : {}),
    }));
    this.options.logger.info({ queue: name, fifo }, 'created SQS queue (createQueues is on)');
    return QueueUrl!;
  }

  /**
   * The attributes the binding reads. A role that may not read them (a
   * producer with only `sqs:SendMessage`) gets undefined, and the defaults
   * apply: FIFO by name, deduplication ids sent, 1 MiB, RedrivePolicy unknown.
   */
  private async attributes(name: string, url: string, create: boolean): Promise<Partial<Record<QueueAttributeName, string>> | undefined> {
    try {
      return (await this.client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ATTRIBUTES }))).Attributes ?? {};
    } catch (error) {
      if (isQueueMissing(error)) {
        if (!create) throw new QueueNotFoundError(name, { cause: error });
        await this.create(name);
        return {};
      }
      if (!isAccessDenied(error)) throw error;
      this.options.logger.debug({ queue: name, error: describe(error) }, 'cannot read the queue attributes; using the defaults');
      return undefined;
    }
  }
}
