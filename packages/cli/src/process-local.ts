import type { GlobalSettings } from './args.js';
import { UsageError } from './errors.js';
import type { Command } from './usage.js';

/** Commands whose whole job runs inside one process, so `memory://` serves them. */
const SELF_CONTAINED: ReadonlySet<Command> = new Set(['demo']);

const EXAMPLE = '--url redis://127.0.0.1:6379';

/**
 * Refuses `memory://` for a command that works on a broker other processes
 * share (publish, consume, dlq): a fresh process's in-memory broker starts
 * empty and vanishes on exit, so `dlq list` would always report an empty DLQ
 * and `publish` would lose its message. A usage error, whether `memory://` was
 * the default or given; in-process callers that share this process's memory
 * brokers may use it.
 */
export function refuseProcessLocal(command: Command, settings: GlobalSettings): void {
  if (SELF_CONTAINED.has(command) || settings.sharesMemoryBrokers) return;
  if (new URL(settings.url).protocol !== 'memory:') return;
  if (settings.urlFrom === 'default') {
    throw new UsageError(`${command} needs a broker: pass --url (e.g. ${EXAMPLE}) or set BABELQUEUE_URL`, command);
  }
  const given = settings.urlFrom === 'env' ? `BABELQUEUE_URL is ${settings.url}, but memory://` : 'memory://';
  const loss = command === 'publish'
    ? 'the message would be gone when this command exits'
    : 'this command would only ever see a new, empty broker';
  throw new UsageError(`${given} lives inside one process: ${loss}. Pass --url with a shared broker (e.g. ${EXAMPLE}) or set BABELQUEUE_URL`, command);
}
