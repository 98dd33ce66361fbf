import { spawn } from 'node:child_process';
import { join } from 'node:path';

const child = join(import.meta.dirname, '..', 'fixtures', 'stuck-consumer.ts');

/** How long the child may take to start and reach its handler on a busy machine. */
const START_TIMEOUT_MS = 60_000;

/**
 * Starts the stuck consumer (fixtures/stuck-consumer.ts) in a child process;
 * `inHandler` resolves once a handler of it hangs (or fails after the
 * deadline), `exited` with the signal that ended it.
 */
export function startStuckConsumer(
  url: string,
  layout: string,
  queue: string,
  urn: string,
  { concurrency = 1, retryAfter = 1, pass = 0 }: { concurrency?: number; retryAfter?: number; pass?: number } = {},
) {
  const args = [child, url, layout, queue, urn, String(concurrency), String(retryAfter), String(pass)];
  const proc = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const inHandler = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`stuck consumer did not reach its handler in ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    proc.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('in-handler')) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`stuck consumer exited early (${code})`));
    });
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.on('exit', (_code, signal) => resolve(signal)));
  return { proc, inHandler, exited };
}
