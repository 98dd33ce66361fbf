#!/usr/bin/env node
import { nodeIo } from './io.js';
import { main } from './main.js';

// Binding clients log retries and connection errors on their own; the CLI reports
// failures itself, once. BABELQUEUE_LOG_LEVEL=warn (or debug) shows them.
process.env.BABELQUEUE_LOG_LEVEL ??= 'silent';

// Ctrl-C / SIGTERM: a running consume or redrive stops taking work and settles what it holds.
const stop = new AbortController();
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(130);
    stopping = true;
    stop.abort();
  });
}

void main(process.argv.slice(2), nodeIo(stop.signal)).then((code) => {
  process.exitCode = code;
  // A broker client that keeps a reconnect timer alive must not hold the shell.
  setTimeout(() => process.exit(code), 100).unref();
});
