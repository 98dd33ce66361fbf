import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..', '..', '..');
const script = join(import.meta.dirname, 'python-kafka-peer.py');

/** The Python SDK's Kafka transport, driven through python-kafka-peer.py. */
export interface PythonKafka {
  /** Pass as `describe(name, { skip }, ...)`. */
  readonly skip: string | false;
  run(args: string[]): Promise<any>;
}

/**
 * The interpreter of the interop venv (BABELQUEUE_VENV, else `.venv`), when it
 * has the SDK's Kafka extra (`babelqueue[kafka]`, i.e. confluent-kafka).
 * Otherwise the suite is skipped with one loud line that names the fix.
 */
export function pythonKafka(): PythonKafka {
  const python = join(process.env.BABELQUEUE_VENV ?? join(root, '.venv'), 'bin', 'python');
  let problem: string | undefined;
  if (!existsSync(python)) {
    problem = `${python} does not exist (scripts/peers creates it)`;
  } else {
    try {
      execFileSync(python, [script, 'check'], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
    } catch {
      problem = `${python} lacks the Python SDK's Kafka extra: add babelqueue[kafka] (confluent-kafka) to test/interop/peer/requirements.txt and re-run scripts/peers`;
    }
  }
  if (problem !== undefined) process.stderr.write(`\n*** SKIPPED: Kafka interop suite — ${problem} ***\n\n`);
  return {
    skip: problem === undefined ? false : `SKIPPED (no Python Kafka peer): ${problem}`,
    run: (args) =>
      new Promise((resolve, reject) => {
        execFile(python, [script, ...args], { timeout: 90_000, env: { ...process.env, PYTHONIOENCODING: 'utf-8' } }, (error, stdout, stderr) => {
          if (error) return reject(new Error(`python-kafka-peer ${args[0]} failed: ${error.message}\n${stderr}`));
          try {
            resolve(JSON.parse(stdout));
          } catch {
            reject(new Error(`python-kafka-peer ${args[0]} printed no JSON:\n${stdout}\n${stderr}`));
          }
        });
      }),
  };
}
