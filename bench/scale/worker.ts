/**
 * One worker process of the scaling bench: a createApp worker on a broker's
 * binding, driven over IPC by bench/scale/index.ts. It stays up across the
 * cells of one worker count, so a cell does not pay for a Node start.
 *
 *   parent → worker: { type: 'run', broker, url, queue, group, concurrency } | { type: 'stop' } | { type: 'exit' }
 *   worker → parent: { type: 'ready' } | { type: 'progress', handled } | { type: 'done', handled, cpuUs, first, last }
 *
 * `first` and `last` are the epoch ms of the first and the last message
 * handled, so the parent times the cell from the first message (a consumer's
 * subscribe or a group join is not counted, a rebalance during the run is);
 * `cpuUs` is this process's CPU between the two (connect and close are not in it).
 */
import { createApp, silentLogger } from '@babelqueue/core';
import { URN } from '../support/workload.js';
import { brokerNamed } from './brokers.js';

export interface RunCommand {
  type: 'run';
  broker: string;
  url: string;
  queue: string;
  group: string;
  concurrency: number;
}
export type ToWorker = RunCommand | { type: 'stop' } | { type: 'exit' };
export type FromWorker =
  | { type: 'ready' }
  | { type: 'progress'; handled: number }
  | { type: 'done'; handled: number; cpuUs: number; first: number; last: number; error?: string };

const send = (message: FromWorker) => process.send!(message);

let stop: (() => Promise<void>) | undefined;

function run(command: RunCommand): void {
  let handled = 0;
  let first = 0;
  let last = 0;
  let cpuAtFirst: NodeJS.CpuUsage | undefined;
  let cpuUsed: NodeJS.CpuUsage = { user: 0, system: 0 };
  const app = createApp({ transport: brokerNamed(command.broker).transport(command.url, command.group), queue: command.queue, logger: silentLogger });
  app.handle(URN, () => {
    last = Date.now();
    if (handled++ === 0) {
      first = last;
      cpuAtFirst = process.cpuUsage();
    } else cpuUsed = process.cpuUsage(cpuAtFirst);
  });
  const abort = new AbortController();
  let error: string | undefined;
  // A consume loop that fails is reported with the cell (the parent sees no progress, stops the cell and says why).
  const consuming = app.consume({ concurrency: command.concurrency, signal: abort.signal }).catch((e: unknown) => void (error = e instanceof Error ? e.message : String(e)));
  const ticker = setInterval(() => send({ type: 'progress', handled }), 100);
  stop = async () => {
    clearInterval(ticker);
    abort.abort();
    await consuming;
    await app.close().catch(() => undefined);
    send({ type: 'done', handled, cpuUs: cpuUsed.user + cpuUsed.system, first, last, ...(error !== undefined ? { error } : {}) });
  };
}

process.on('message', (message: ToWorker) => {
  if (message.type === 'run') run(message);
  else if (message.type === 'stop') void stop?.().then(() => (stop = undefined));
  else process.exit(0);
});
send({ type: 'ready' });
