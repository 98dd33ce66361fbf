import { isServiceBusError, type ServiceBusReceivedMessage, type ServiceBusSessionReceiver } from '@azure/service-bus';
import { pause, reconnectDelayMs, type ConsumeOptions, type Logger, type ResolvedReconnectBackoff } from '@babelqueue/core';
import { type Delivery } from '@babelqueue/core/binding';
import { describeError, isTransient } from './errors.js';

/** Pauses after consecutive failed accepts or receives: 100 ms doubling, at most 5 s. */
const RETRY_BACKOFF: ResolvedReconnectBackoff = Object.freeze({ initialDelayMs: 100, maxDelayMs: 5_000, multiplier: 2 });
/** How often the loop checks `idleMs`. */
const IDLE_CHECK_MS = 50;

export interface SessionLoopDeps {
  /**
   * Accepts the next available session (PeekLock, the SDK's own lock renewal off: the
   * loop renews). Service Bus holds the request until a session is available or its
   * time-out passes, then fails with `ServiceTimeout` or `SessionCannotBeLocked`.
   */
  readonly accept: () => Promise<ServiceBusSessionReceiver>;
  /** A delivery settled through the session receiver that received it. */
  readonly toDelivery: (message: ServiceBusReceivedMessage, receiver: ServiceBusSessionReceiver) => Delivery;
  readonly queue: string;
  readonly logger: Logger;
  /** How long a receive waits for the session's next message before the session is let go. */
  readonly receiveWaitMs: number;
  /** How long the session lock is renewed while one handler runs (0: not while a handler runs). */
  readonly maxLockRenewalMs: number;
}

/**
 * Consumption of a session-enabled queue: `concurrency` workers, each holding at most one
 * session. A worker accepts the next available session, receives its messages one at a time
 * and hands each over only after the one before it was settled (the session's order kept; an
 * abandoned message comes back first), and lets the session go after a receive wait without a
 * message, then accepts the next. The session lock is renewed while the worker holds it (see
 * {@link SessionLockKeeper}). Drain limits (`maxMessages`, `idleMs`) as the pull loop honours
 * them. A transient failure is logged at WARN and the worker accepts again after a pause;
 * refused credentials or a missing entity end the loop with the SDK's error.
 */
export async function sessionLoop(deps: SessionLoopDeps, onDelivery: (delivery: Delivery) => Promise<void>, options: ConsumeOptions): Promise<void> {
  const concurrency = Math.max(1, Math.floor(options.concurrency));
  const { maxMessages, idleMs } = options;
  const stop = new AbortController();
  const signal = AbortSignal.any([options.signal, stop.signal]);
  let claimed = 0;
  let taken = 0;
  let handling = 0;
  let lastActivity = Date.now();
  let fatal: { error: unknown } | undefined;
  const end = (error?: unknown) => {
    if (error !== undefined) fatal ??= { error };
    stop.abort();
  };
  /** Reserves one of `maxMessages` for a receive; false once they are all spoken for. */
  const claim = () => {
    if (maxMessages !== undefined && claimed >= maxMessages) return false;
    claimed += 1;
    return true;
  };
  const idle = idleMs === undefined ? undefined : setInterval(() => {
    if (handling === 0 && Date.now() - lastActivity >= idleMs) end();
  }, Math.min(IDLE_CHECK_MS, idleMs));

  /** Receives and hands over the messages of one session until it runs dry, fails or the loop stops. */
  const drain = async (receiver: ServiceBusSessionReceiver): Promise<void> => {
    const keeper = new SessionLockKeeper(receiver, deps.maxLockRenewalMs, deps.logger, deps.queue);
    try {
      while (!signal.aborted && claim()) {
        let messages: ServiceBusReceivedMessage[];
        try {
          messages = await receiver.receiveMessages(1, { maxWaitTimeInMs: deps.receiveWaitMs, abortSignal: signal });
        } catch (error) {
          claimed -= 1;
          if (signal.aborted) return;
          if (!isTransient(error)) return end(error);
          deps.logger.warn({ queue: deps.queue, sessionId: receiver.sessionId, error: describeError(error) }, 'Service Bus session receive failed; the session is let go and the next one accepted');
          return;
        }
        const message = messages[0];
        if (message === undefined) {
          claimed -= 1;
          return;
        }
        taken += 1;
        handling += 1;
        lastActivity = Date.now();
        if (maxMessages !== undefined && taken >= maxMessages) stop.abort();
        keeper.handlerStarted();
        try {
          // onDelivery owns its errors (the runtime logs them and settles); one never stops the loop.
          await onDelivery(deps.toDelivery(message, receiver)).catch(() => undefined);
        } finally {
          keeper.handlerEnded();
          handling -= 1;
          lastActivity = Date.now();
        }
      }
    } finally {
      keeper.stop();
    }
  };

  const worker = async (): Promise<void> => {
    let failures = 0;
    while (!signal.aborted && (maxMessages === undefined || claimed < maxMessages)) {
      let receiver: ServiceBusSessionReceiver;
      try {
        receiver = await untilAborted(deps.accept(), signal, (late) => void late.close().catch(() => undefined));
      } catch (error) {
        if (signal.aborted) return;
        failures += 1;
        if (isNoSession(error)) {
          // Service Bus held the accept as long as its time-out allows; ask again (after a pause, should it answer at once).
          await pause(reconnectDelayMs(RETRY_BACKOFF, failures), signal);
          continue;
        }
        if (!isTransient(error)) return end(error);
        const retryMs = reconnectDelayMs(RETRY_BACKOFF, failures);
        deps.logger.warn({ queue: deps.queue, error: describeError(error), retryInMs: retryMs }, 'Service Bus session accept failed; the SDK reconnects and the loop accepts again');
        await pause(retryMs, signal);
        continue;
      }
      failures = 0;
      try {
        await drain(receiver);
      } finally {
        await receiver.close().catch(() => undefined);
      }
    }
  };

  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    clearInterval(idle);
  }
  if (fatal !== undefined) throw fatal.error;
}

/**
 * Renews a session's lock while its worker holds it: before each lapse (at most 10 s
 * ahead, as the SDK does), between messages always, and while a handler runs for at most
 * `maxLockRenewalMs` of it. A handler that runs longer lets the lock lapse: Service Bus
 * frees the session, the message comes back (its delivery counted), and the late
 * settlement is refused (logged, nothing lost). The SDK's own renewal counts from the
 * accept for the whole session, which would not keep this per-handler bound.
 */
export class SessionLockKeeper {
  private timer: NodeJS.Timeout | undefined;
  private handlerSince: number | undefined;
  private stopped = false;

  constructor(
    private readonly receiver: ServiceBusSessionReceiver,
    private readonly maxLockRenewalMs: number,
    private readonly logger: Logger,
    private readonly queue: string,
  ) {
    this.schedule();
  }

  handlerStarted(): void {
    this.handlerSince = Date.now();
  }

  handlerEnded(): void {
    this.handlerSince = undefined;
    // A renewal skipped while the handler ran too long: the lock may still be alive; keep it.
    if (this.timer === undefined) this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.stopped) return;
    const remaining = this.receiver.sessionLockedUntilUtc.getTime() - Date.now();
    const delay = remaining < 1_000 ? 0 : remaining - Math.min(remaining / 2, 10_000);
    this.timer = setTimeout(() => void this.renew(), delay);
    this.timer.unref();
  }

  private async renew(): Promise<void> {
    this.timer = undefined;
    if (this.stopped) return;
    if (this.handlerSince !== undefined && Date.now() - this.handlerSince >= this.maxLockRenewalMs) return;
    try {
      await this.receiver.renewSessionLock();
    } catch (error) {
      if (!this.stopped) {
        this.logger.warn({ queue: this.queue, sessionId: this.receiver.sessionId, error: describeError(error) }, 'renewing the Service Bus session lock failed; the session is let go when its lock lapses');
      }
      return;
    }
    this.schedule();
  }
}

/** Service Bus's answers to an accept when no session is available. */
function isNoSession(error: unknown): boolean {
  return isServiceBusError(error) && (error.code === 'SessionCannotBeLocked' || error.code === 'ServiceTimeout');
}

/**
 * `work`, or an abort of `signal`, whichever comes first. The SDK cannot abort an accept
 * Service Bus is holding, so an abort leaves it running: what it brings later goes to `late`.
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal, late: (value: T) => void): Promise<T> {
  if (signal.aborted) {
    work.then(late, () => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      work.then(late, () => undefined);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        // After an abort, onAbort handed it to `late` already.
        if (!signal.aborted) resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
