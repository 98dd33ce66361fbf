import type { Delivery, Transport } from '../transport/transport.js';
import { ShutdownError } from './errors.js';
import type { RunHealth } from './health.js';
import type { Logger } from './logger.js';
import { thrownFields } from './thrown.js';

/** What one worker run needs from the App. */
export interface WorkerSpec {
  readonly transport: Transport;
  readonly queue: string;
  readonly concurrency: number;
  /** Passed on to the transport's consume (see `ConsumeOptions.deadLettering`). */
  readonly deadLettering: boolean;
  /** Passed on to the transport's consume (see `ConsumeOptions.maxAttempts`). */
  readonly maxAttempts: number;
  readonly logger: Logger;
  /** Aborting starts the graceful shutdown. */
  readonly signal: AbortSignal | undefined;
  /** SIGINT/SIGTERM start the shutdown; a second one exits the process at once. */
  readonly handleSignals: boolean;
  readonly connectTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
  /** Processes one delivery; `interrupt` aborts at the shutdown deadline. */
  readonly process: (delivery: Delivery, interrupt: AbortSignal) => Promise<void>;
  /** Runs after the connection is verified and before the first delivery (start-up log lines). */
  readonly started: () => void;
  /** Handlers of this run still running (past their timeout or the deadline included). */
  readonly stillRunning: () => number;
  /** Told when consuming starts and stops and of every delivery (the App's health). */
  readonly health: RunHealth;
}

/** How long closing the transport may take once the worker has stopped. */
const CLOSE_TIMEOUT_MS = 5_000;
/** How long interrupted deliveries get to record their "unsettled" settlement after the deadline. */
const INTERRUPT_GRACE_MS = 2_000;
/**
 * With `handleSignals`, how long the code after `await app.run()` gets to end
 * the process by itself before a handler still running (past the deadline or
 * its timeout, with a timer or a socket open) is cut short by `process.exit`.
 */
const EXIT_GRACE_MS = 2_000;

/**
 * One worker run: verify the connection, consume until the signal aborts (or
 * SIGINT/SIGTERM with `handleSignals`), then shut down within a deadline —
 * stop taking work, let in-flight handlers finish for up to
 * `shutdownTimeoutMs`, interrupt the rest (their deliveries are left unsettled
 * for redelivery, never acknowledged) and close the transport. Rejects with a
 * `ConnectError` when the broker cannot be reached at start-up, and with the
 * transport's error if consuming stops on one.
 *
 * With `handleSignals` the library owns the process's end: when a signal
 * started the shutdown and handlers still run after the worker stopped (past
 * the deadline or their `handlerTimeoutMs`), the exit code is the signal's
 * (130 / 143) and, if the process has not ended by itself within
 * {@link EXIT_GRACE_MS} of `run()` resolving, it is exited.
 */
export async function runWorker(spec: WorkerSpec): Promise<void> {
  const { transport, queue, logger, health } = spec;
  const stop = new AbortController();
  const interrupt = new AbortController();
  let active = 0;
  let started = false;
  let signalled: NodeJS.Signals | undefined;
  const stopping = () => {
    health.stopping();
    if (!stop.signal.aborted) stop.abort();
  };
  spec.signal?.addEventListener('abort', stopping, { once: true });
  if (spec.signal?.aborted) stopping();
  const unhook = spec.handleSignals
    ? hookSignals((signal) => {
      signalled = signal;
      stopping();
    }, () => active, logger)
    : () => undefined;
  try {
    try {
      await transport.connect({ timeoutMs: spec.connectTimeoutMs, signal: stop.signal, queue });
    } catch (error) {
      if (stop.signal.aborted) return;
      throw error;
    }
    if (stop.signal.aborted) return;
    started = true;
    spec.started();
    health.started();
    // Made once per run, not per delivery.
    const finished = () => {
      active -= 1;
      health.finished();
    };
    const failed = (error: unknown) => {
      active -= 1;
      health.finished();
      throw error;
    };
    const onDelivery = (delivery: Delivery): Promise<void> => {
      active += 1;
      health.delivered();
      return spec.process(delivery, interrupt.signal).then(finished, failed);
    };
    const consuming = transport.consume(queue, onDelivery, { concurrency: spec.concurrency, signal: stop.signal, deadLettering: spec.deadLettering, maxAttempts: spec.maxAttempts });
    const ended = consuming.then(() => true, () => true);
    await Promise.race([ended, aborted(stop.signal)]);
    health.stopping();
    if (!(await settledWithin(ended, 0))) {
      logger.info({ queue, inFlight: active, deadlineMs: spec.shutdownTimeoutMs }, 'shutting down: no new messages; waiting for in-flight handlers');
      if (!(await settledWithin(ended, spec.shutdownTimeoutMs))) {
        const left = active;
        interrupt.abort(new ShutdownError(spec.shutdownTimeoutMs));
        await settledWithin(ended, INTERRUPT_GRACE_MS);
        logger.warn({ queue, left, deadlineMs: spec.shutdownTimeoutMs }, `shutdown deadline passed: ${left} message(s) left unsettled for redelivery (never acknowledged)`);
      }
    }
    if (!stop.signal.aborted) await consuming; // consuming ended by itself: surface its error
  } finally {
    unhook();
    spec.signal?.removeEventListener('abort', stopping);
    if (!(await settledWithin(transport.close().then(() => true, (error: unknown) => {
      logger.warn({ queue, ...thrownFields(error) }, 'closing the transport failed');
      return true;
    }), CLOSE_TIMEOUT_MS))) {
      logger.warn({ queue }, `closing the transport took longer than ${CLOSE_TIMEOUT_MS} ms; giving up on it`);
    }
    // A worker that never started (the connect failed or was cancelled) did not stop either.
    if (started) logger.info({ queue }, 'worker stopped');
    if (signalled !== undefined) exitIfHeld(signalled, spec.stillRunning(), queue, logger);
  }
}

/**
 * A handler still running after the worker stopped (it cannot be killed) may
 * hold the process open with a timer or a socket: the exit code becomes the
 * signal's, and the process is exited if it is still there after the grace.
 */
function exitIfHeld(signal: NodeJS.Signals, running: number, queue: string, logger: Logger): void {
  if (running === 0) return;
  const code = signal === 'SIGINT' ? 130 : 143;
  process.exitCode = code;
  setTimeout(() => {
    logger.warn({ queue, running, code }, `exiting: ${running} handler(s) still running after the worker stopped on ${signal} (their messages were not acknowledged)`);
    flushThenExit(logger, code);
  }, EXIT_GRACE_MS).unref();
}

/** Exits once the logger's buffer is written (pino's `flush(cb)`); the default logger writes synchronously. */
function flushThenExit(logger: Logger, code: number): void {
  const flush = (logger as { flush?: (done?: (error?: Error) => void) => void }).flush;
  if (typeof flush !== 'function') process.exit(code);
  setTimeout(() => process.exit(code), 1_000).unref();
  try {
    flush.call(logger, () => process.exit(code));
  } catch {
    process.exit(code);
  }
}

/**
 * SIGINT/SIGTERM: the first starts the graceful shutdown, a second exits the
 * process at once (130 / 143), saying how many messages it leaves for
 * redelivery. Returns the function that removes the listeners.
 */
function hookSignals(stopping: (signal: NodeJS.Signals) => void, active: () => number, logger: Logger): () => void {
  let received = 0;
  const on = (signal: NodeJS.Signals) => {
    received += 1;
    if (received === 1) {
      logger.info({ signal }, `${signal}: shutting down gracefully (send it again to exit at once)`);
      stopping(signal);
      return;
    }
    logger.warn({ signal, left: active() }, `${signal} again: exiting now; ${active()} message(s) left unsettled for redelivery`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  return () => {
    process.off('SIGINT', on);
    process.off('SIGTERM', on);
  };
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** True when `promise` settles within `ms` (0: already settled). */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
