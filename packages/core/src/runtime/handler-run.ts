import type { Outcome } from '../settlement/outcome.js';
import type { DeliveredMessage } from './delivered-message.js';
import { HandlerTimeoutError, ShutdownError } from './errors.js';
import type { Handler, Message } from './message.js';

/**
 * The shutdown interrupt of one worker run, watched by one listener for every
 * delivery of the run (a listener per delivery costs more than the delivery).
 */
export class InterruptWatch {
  readonly #running = new Set<HandlerRace>();
  /** Handlers whose promise has not settled, decided or not (a timed-out or interrupted handler runs on). */
  #live = 0;

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener('abort', () => {
      for (const race of [...this.#running]) race.interrupt(this.reason());
    }, { once: true });
  }

  get aborted(): boolean {
    return this.signal.aborted;
  }

  /** The worker's ShutdownError (a generic one if the signal was aborted with something else). */
  reason(): ShutdownError {
    return this.signal.reason instanceof ShutdownError ? this.signal.reason : new ShutdownError(0);
  }

  /** Handlers of this run still running, including those past their timeout or the deadline. */
  get live(): number {
    return this.#live;
  }

  watch(race: HandlerRace): void {
    this.#running.add(race);
  }

  /** Counts a running handler until `handled` settles. */
  track(handled: Promise<unknown>): void {
    this.#live += 1;
    void handled.then(() => {
      this.#live -= 1;
    });
  }

  /** For a handler whose settling the caller observes itself (one `then` per delivery, not two). */
  began(): void {
    this.#live += 1;
  }

  ended(): void {
    this.#live -= 1;
  }

  unwatch(race: HandlerRace): void {
    this.#running.delete(race);
  }
}

/** One `handled` outcome for every delivery: outcomes are never changed. */
const HANDLED: Outcome = Object.freeze({ kind: 'handled' });
const INTERRUPTED: Outcome = Object.freeze({ kind: 'interrupted' });

/**
 * Runs the handler, racing it against the handler timeout and the shutdown
 * interrupt. Whichever comes first decides; the loser's result is ignored (a
 * handler cannot be killed, but it can no longer settle the message). A
 * promise only when the handler returned one: a handler that returned at once
 * has beaten both (neither can fire while it runs).
 */
export function runHandler(
  handler: Handler,
  message: DeliveredMessage,
  handlerTimeoutMs: number | undefined,
  interrupt: InterruptWatch | undefined,
): Outcome | Promise<Outcome> {
  if (handlerTimeoutMs === undefined && interrupt === undefined) return invoke(handler, message);
  if (interrupt?.aborted === true) {
    // The deadline passed before the handler started: it runs with its signal
    // already aborted, and the delivery is left for redelivery whatever it does.
    message.abort(interrupt.reason());
    const late = invoke(handler, message); // never rejects
    if (late instanceof Promise) interrupt.track(late);
    return INTERRUPTED;
  }
  // The timer starts before the handler, so its synchronous part counts too.
  const timed = handlerTimeoutMs === undefined ? undefined : new HandlerRace(message, interrupt).time(handlerTimeoutMs);
  const outcome = invoke(handler, message);
  if (!(outcome instanceof Promise)) {
    timed?.end();
    return outcome;
  }
  return (timed ?? new HandlerRace(message, interrupt)).against(outcome);
}

/** One running handler against its timeout and the interrupt: the first to decide wins. */
class HandlerRace {
  #timer: NodeJS.Timeout | undefined;
  #resolve: ((outcome: Outcome) => void) | undefined;
  #decided = false;

  constructor(
    private readonly message: DeliveredMessage,
    private readonly interrupts: InterruptWatch | undefined,
  ) {}

  time(ms: number): this {
    this.#timer = setTimeout(() => {
      const error = new HandlerTimeoutError(ms);
      this.message.abort(error);
      this.decide({ kind: 'failed', error });
    }, ms);
    return this;
  }

  against(handled: Promise<Outcome>): Promise<Outcome> {
    const interrupts = this.interrupts;
    interrupts?.watch(this);
    interrupts?.began();
    return new Promise<Outcome>((resolve) => {
      this.#resolve = resolve;
      void handled.then((outcome) => {
        interrupts?.ended();
        this.decide(outcome);
      });
    });
  }

  interrupt(reason: ShutdownError): void {
    this.message.abort(reason);
    this.decide(INTERRUPTED);
  }

  /** Stops the timer and the watch (the handler returned at once, or the race is decided). */
  end(): void {
    clearTimeout(this.#timer);
    this.interrupts?.unwatch(this);
  }

  private decide(outcome: Outcome): void {
    if (this.#decided) return;
    this.#decided = true;
    this.end();
    this.#resolve!(outcome);
  }
}

/** Calls the handler; a promise only when the handler returned a thenable. */
function invoke(handler: Handler, message: Message): Outcome | Promise<Outcome> {
  let result: unknown;
  try {
    result = handler(message.data, message);
  } catch (error) {
    return failed(error);
  }
  return isThenable(result) ? Promise.resolve(result).then(() => HANDLED, failed) : HANDLED;
}

function failed(error: unknown): Outcome {
  return { kind: 'failed', error, ...(isUnrecoverable(error) ? { unrecoverable: true } : {}) };
}

/** What `await` would wait for: any object or function with a `then` method. */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** By name too, so an error class from a second copy of the package (ESM beside CJS) still counts. */
function isUnrecoverable(error: unknown): boolean {
  return error instanceof Error && error.name === 'UnrecoverableError';
}
