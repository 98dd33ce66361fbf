import { randomUUID } from 'node:crypto';
import { main, type CliIo } from 'babelqueue';

/** Captured output of one in-process `main` run. */
export interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
  /** Questions the command asked. */
  readonly asked: string[];
}

/** Options of {@link run}. */
export interface RunOptions {
  env?: Record<string, string>;
  interactive?: boolean;
  /** The answer to every confirmation question. */
  answer?: boolean;
  signal?: AbortSignal;
  /** Whether this process's memory:// brokers are shared with the caller (default true: the tests open them too). */
  sharesMemoryBrokers?: boolean;
  /** Called with each piece of stdout as it is written (to react to output while the command runs). */
  onStdout?: (text: string) => void;
  /** Called with each piece of stderr as it is written. */
  onStderr?: (text: string) => void;
}

/** Runs the CLI in this process with captured streams. */
export async function run(argv: string[], options: RunOptions = {}): Promise<Run> {
  let out = '';
  let err = '';
  const asked: string[] = [];
  const io: CliIo = {
    stdout: (text) => {
      out += text;
      options.onStdout?.(text);
    },
    stderr: (text) => {
      err += text;
      options.onStderr?.(text);
    },
    env: options.env ?? {},
    interactive: options.interactive ?? false,
    confirm: async (question) => {
      asked.push(question);
      return options.answer ?? false;
    },
    ...(options.signal ? { signal: options.signal } : {}),
    sharesMemoryBrokers: options.sharesMemoryBrokers ?? true,
  };
  const code = await main(argv, io);
  return { code, out, err, asked };
}

/** A `memory://` URL of its own: the registry shares one in-memory broker per host within the process. */
export function memoryUrl(): string {
  return `memory://cli-${randomUUID().slice(0, 8)}`;
}

/** stdout split into JSON documents, one per line. */
export function jsonLines(text: string): Record<string, any>[] {
  return text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, any>);
}
