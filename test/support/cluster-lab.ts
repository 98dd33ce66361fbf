/**
 * Wiring for the suites on the cluster lab (scripts/clusters, files in
 * scripts/clusters.d/): the cluster's URL, loud skips as broker suites do, and
 * node kills. A node is killed and restored through the cluster's own lab file
 * (`<id>_kill_node N`, `<id>_restore_node N`), which `scripts/clusters
 * kill-node` and `restore-node` call too.
 */
import { execFile } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const LAB_FILES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'clusters.d');

/** A cluster of the lab, as its lab file names it. */
export type ClusterName = 'kafka-ha' | 'artemis-ha';

const ENV: Record<ClusterName, string> = {
  'kafka-ha': 'BABELQUEUE_KAFKA_HA_URL',
  'artemis-ha': 'BABELQUEUE_ARTEMIS_HA_URL',
};

export interface ClusterSuite {
  readonly name: ClusterName;
  /** The cluster URL, or undefined when the suite is skipped. */
  readonly url: string | undefined;
  /** Pass as `describe(name, { skip }, ...)`. */
  readonly skip: string | false;
}

/**
 * The cluster's URL from its environment variable (`.clusters/env` sets it), or
 * a skip with one loud line; under `CI=true` a missing cluster fails the run,
 * as a missing broker does.
 */
export function cluster(name: ClusterName): ClusterSuite {
  const variable = ENV[name];
  const url = process.env[variable];
  if (url) return { name, url, skip: false };
  const why = `${variable} is not set; start it with \`scripts/clusters up ${name}\``;
  if (process.env.CI === 'true') throw new Error(`cluster suite "${name}" cannot run under CI=true: ${why}`);
  process.stderr.write(`\n*** SKIPPED: ${name} cluster suite — ${why} ***\n\n`);
  const skippedFile = process.env.BABELQUEUE_SKIPPED_FILE;
  if (skippedFile) appendFileSync(skippedFile, `cluster:${name}\n`);
  return { name, url: undefined, skip: `SKIPPED (no ${name} cluster): ${why}` };
}

async function labCall(name: ClusterName, fn: string, ...args: string[]): Promise<string> {
  const file = join(LAB_FILES, `${name}.sh`);
  const id = name.replace(/-/g, '_');
  const { stdout } = await run('bash', ['-c', `source "$0" && ${id}_${fn} "$@"`, file, ...args], { timeout: 300_000 });
  return stdout;
}

/** SIGKILLs node `node` of the cluster (a crashed machine); resolves once the process is gone. */
export async function killNode(name: ClusterName, node: number): Promise<void> {
  await labCall(name, 'kill_node', String(node));
}

/** Starts node `node` again on its data; resolves once the lab file says it is back. */
export async function restoreNode(name: ClusterName, node: number): Promise<void> {
  await labCall(name, 'restore_node', String(node));
}

/** True when every node of the cluster is up and the cluster is whole (its lab file's readiness check). */
export async function clusterReady(name: ClusterName): Promise<boolean> {
  return labCall(name, 'ready').then(() => true, () => false);
}
