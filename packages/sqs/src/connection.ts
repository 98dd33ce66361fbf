import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { maskUrl, pause, type ConnectOptions } from '@babelqueue/core';
import { connectWithin } from '@babelqueue/core/binding';
import { errorCode, isAccessDenied, isFatalClientError } from './aws-errors.js';
import type { ResolvedOptions, SqsTransportOptions } from './options.js';

/**
 * The SQS client of one transport. SQS is plain HTTPS, so there is no
 * connection to hold: "connecting" means one signed request answered, which
 * proves the endpoint, the region and the credentials.
 */
export class Connection {
  readonly client: SQSClient;
  /** Where the transport talks, for log lines: `sqs://<region>?endpoint=<masked endpoint>`. */
  readonly target: string;
  private readonly owned: boolean;
  private verified = false;
  /** The last request answered (an error response counts: the endpoint answered); see {@link reached}. */
  private answered = true;

  constructor(options: SqsTransportOptions, resolved: ResolvedOptions) {
    this.owned = options.client === undefined;
    this.client = options.client ?? new SQSClient({
      // Bounded, so a silent endpoint fails the request (and the SDK retries it) instead of holding it.
      requestHandler: { requestTimeout: resolved.requestTimeoutMs, throwOnRequestTimeout: true },
      ...options.clientConfig,
      ...(resolved.region !== undefined ? { region: resolved.region } : {}),
      ...(resolved.endpoint !== undefined ? { endpoint: resolved.endpoint } : {}),
      ...(options.credentials !== undefined ? { credentials: options.credentials } : {}),
    });
    // An endpoint rarely carries user info; mask it when it does.
    const endpoint = resolved.endpoint === undefined ? '' : `?endpoint=${resolved.endpoint.includes('@') ? maskUrl(resolved.endpoint) : resolved.endpoint}`;
    this.target = `sqs://${resolved.region ?? '(default region)'}${endpoint}`;
    // A client handed in is the caller's: no middleware is added to it.
    if (this.owned) {
      this.client.middlewareStack.add((next) => async (args) => {
        try {
          const result = await next(args);
          this.answered = true;
          return result;
        } catch (error) {
          this.answered = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== undefined;
          throw error;
        }
      }, { step: 'initialize', name: 'babelqueueReached' });
    }
  }

  /**
   * SQS is stateless HTTP: "connected" means verified, and the last request
   * (after the SDK's own retries) got an answer from the endpoint, even an
   * error one. A client handed in reports only that it was verified.
   */
  get reached(): boolean {
    return this.verified && this.answered;
  }

  /**
   * One `ListQueues` answered (an `AccessDenied` counts: the request was signed
   * with valid credentials, the worker just may not list queues). Missing or
   * refused credentials, a missing region and an unknown host fail at once; a
   * refused or dropped connection is retried until the deadline.
   */
  async verify(options: ConnectOptions): Promise<void> {
    if (this.verified) return;
    await connectWithin(this.target, options, async ({ signal, note }) => {
      for (;;) {
        try {
          await this.client.send(new ListQueuesCommand({ MaxResults: 1 }), { abortSignal: signal });
          return;
        } catch (error) {
          if (isAccessDenied(error)) return;
          if (signal.aborted || isFatalClientError(error) || errorCode(error) === 'ENOTFOUND') throw error;
          note(error);
          await pause(250, signal);
        }
      }
    });
    this.verified = true;
  }

  /** Frees the client's sockets, unless the client was handed in. */
  destroy(): void {
    if (this.owned) this.client.destroy();
  }
}
