/**
 * The Python interop peer (test/interop/peer/peer.py, run in the `.venv` that
 * `scripts/peers` creates). Like a broker suite, an interop suite without its
 * peer skips with one loud line, and fails under `CI=true`.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const script = join(root, 'test', 'interop', 'peer', 'peer.py');

export interface PythonPeer {
  /** Pass as `describe(name, { skip }, ...)`. */
  skip: string | false;
  /** Runs `peer.py <args>` (stdin optional) and returns its one JSON answer; killed after `timeoutMs` (default 60 s). */
  run(args: string[], stdin?: string, timeoutMs?: number): Promise<any>;
}

/** The venv's interpreter: BABELQUEUE_VENV, else `.venv` in the repository root. */
export function venvPython(): string {
  return join(process.env.BABELQUEUE_VENV ?? join(root, '.venv'), 'bin', 'python');
}

let checked: { python: string; problem: string | undefined } | undefined;

function check(): { python: string; problem: string | undefined } {
  if (checked) return checked;
  const python = venvPython();
  let problem: string | undefined;
  if (!existsSync(python)) {
    problem = `${python} does not exist; create it with \`scripts/peers\``;
  } else {
    try {
      execFileSync(python, [script, 'version'], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
    } catch (e) {
      problem = `the peer does not run in ${python} (${(e as Error).message.split('\n')[0]}); re-run \`scripts/peers\``;
    }
  }
  checked = { python, problem };
  return checked;
}

/** The Python peer for a suite named `suite`, or why that suite is skipped. */
export function pythonPeer(suite: string): PythonPeer {
  const { python, problem } = check();
  const run = (args: string[], stdin?: string, timeoutMs?: number) => runPeer(python, args, stdin, timeoutMs);
  if (problem === undefined) return { skip: false, run };
  if (process.env.CI === 'true') {
    throw new Error(`interop suite "${suite}" cannot run under CI=true: ${problem}`);
  }
  process.stderr.write(`\n*** SKIPPED: ${suite} interop suite — ${problem} ***\n\n`);
  return { skip: `SKIPPED (no Python peer): ${problem}`, run };
}

function runPeer(python: string, args: string[], stdin?: string, timeoutMs = 60_000): Promise<any> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      python,
      [script, ...args],
      { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, PYTHONIOENCODING: 'utf-8' } },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(`peer.py ${args[0]} failed: ${error.message}\n${stderr}`));
          return;
        }
        try {
          resolve(JSON.parse(stdout));
        } catch {
          reject(new Error(`peer.py ${args[0]} printed no JSON:\n${stdout}\n${stderr}`));
        }
      },
    );
    child.stdin!.end(stdin ?? '');
  });
}

/** A base64 body from the peer, as bytes. */
export function bytes(b64: string): Buffer {
  return Buffer.from(b64, 'base64');
}
