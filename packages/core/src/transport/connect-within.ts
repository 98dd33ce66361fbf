import { ConnectError } from '../runtime/errors.js';
import type { ConnectOptions } from './transport.js';

/** What a connection attempt is given by {@link connectWithin}. */
export interface ConnectAttempt {
  /** Aborts when the deadline passes or the caller gives up: stop retrying. */
  readonly signal: AbortSignal;
  /** Records a passing failure (a refused connection the client retries); a timeout names the last one. */
  note(error: unknown): void;
}

/**
 * Runs a binding's connection attempt under the connect deadline: resolves
 * with its result, or rejects with a {@link ConnectError} naming `target` when
 * the attempt fails (refused credentials, unknown host: at once), the deadline
 * passes (naming the last error the attempt noted) or the caller aborts. The
 * attempt's signal aborts in the last two cases, so it can tear its client
 * down instead of retrying in the background.
 */
export async function connectWithin<T>(
  target: string,
  options: ConnectOptions,
  attempt: (context: ConnectAttempt) => Promise<T>,
): Promise<T> {
  const { timeoutMs } = options;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw new RangeError(`connect timeoutMs must be a positive number, got ${String(timeoutMs)}`);
  }
  const deadline = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal;
  let timer: NodeJS.Timeout | undefined;
  let last: string | undefined;
  const note = (error: unknown) => {
    last = error instanceof Error ? error.message || error.name : String(error);
  };
  const gaveUp = new Promise<never>((_, reject) => {
    const stop = () => {
      const why = options.signal?.aborted
        ? 'start-up was aborted'
        : `no answer within ${timeoutMs} ms${last === undefined ? '' : ` (last error: ${last})`}`;
      reject(new ConnectError(target, why));
    };
    timer = setTimeout(() => deadline.abort(), timeoutMs);
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
  try {
    return await Promise.race([
      attempt({ signal, note }).catch((cause: unknown) => {
        if (cause instanceof ConnectError) throw cause;
        throw new ConnectError(target, cause instanceof Error ? cause.message || cause.name : String(cause), { cause });
      }),
      gaveUp,
    ]);
  } finally {
    clearTimeout(timer);
    if (!deadline.signal.aborted) deadline.abort();
  }
}
