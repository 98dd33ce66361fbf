import { createInterface } from 'node:readline/promises';

/**
 * Everything the CLI touches outside itself, so `main` can run in-process
 * (tests, scripts) with captured output.
 */
export interface CliIo {
  /** Writes to standard output (results). */
  stdout(text: string): void;
  /** Writes to standard error (errors, prompts, progress). */
  stderr(text: string): void;
  /** Environment variables (`BABELQUEUE_URL`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** True when a person can answer a prompt (stdin and stderr are terminals). */
  readonly interactive: boolean;
  /** Asks a yes/no question; resolves true only for an explicit yes. */
  confirm(question: string): Promise<boolean>;
  /** Aborted on Ctrl-C / SIGTERM: long-running commands stop cleanly. */
  readonly signal?: AbortSignal;
  /**
   * True when the caller runs in this process and shares its `memory://`
   * brokers with the CLI (tests, a script that also opens `memory://name`).
   * Otherwise `publish`, `consume` and `dlq` refuse `memory://`: a broker no
   * other process can reach is always empty and vanishes on exit.
   */
  readonly sharesMemoryBrokers?: boolean;
}

/** The process's own streams, environment and signals. */
export function nodeIo(signal?: AbortSignal): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    interactive: process.stdin.isTTY === true && process.stderr.isTTY === true,
    async confirm(question) {
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        const answer = await rl.question(`${question} [y/N] `);
        return /^y(es)?$/i.test(answer.trim());
      } finally {
        rl.close();
      }
    },
    ...(signal ? { signal } : {}),
  };
}
