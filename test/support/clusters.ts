/**
 * Cluster wiring for the failover suites (issue #30), as test/support/brokers.ts
 * is for the single-node lab: each suite asks for its cluster's URL; outside CI
 * a missing cluster skips the suite with one loud line, under `CI=true` it
 * fails the run. The variable of a cluster is the `<id>_env` its
 * scripts/clusters.d/<name>.sh declares, so a new cluster needs no entry here.
 */
import { execFile } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrokerSuite } from './brokers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'clusters');

/** The environment variable scripts/clusters.d/<name>.sh names for the cluster's URL. */
export function clusterVariable(name: string): string {
  const ident = name.replaceAll('-', '_');
  const text = readFileSync(join(ROOT, 'scripts', 'clusters.d', `${name}.sh`), 'utf8');
  const variable = new RegExp(`^${ident}_env=(\\S+)$`, 'm').exec(text)?.[1];
  if (variable === undefined) throw new Error(`scripts/clusters.d/${name}.sh declares no ${ident}_env`);
  return variable;
}

/** Resolves a cluster URL for a suite, or explains loudly why the suite is skipped. */
export function cluster(name: string): BrokerSuite {
  const variable = clusterVariable(name);
  const url = process.env[variable];
  if (url) return { url, skip: false };
  const why = `${variable} is not set; start it with \`scripts/clusters up ${name}\``;
  if (process.env.CI === 'true') {
    throw new Error(`cluster suite "${name}" cannot run under CI=true: ${why}`);
  }
  process.stderr.write(`\n*** SKIPPED: ${name} cluster suite — ${why} ***\n\n`);
  // scripts/run-tests.mjs names every skipped suite again in one line at the end of the run.
  const skippedFile = process.env.BABELQUEUE_SKIPPED_FILE;
  if (skippedFile) appendFileSync(skippedFile, `cluster:${name}\n`);
  return { url: undefined, skip: `SKIPPED (no ${name} cluster): ${why}` };
}

/**
 * `scripts/clusters kill-node|restore-node <name> <node>`: SIGKILLs one node of
 * the cluster, or starts it again and resolves once it has rejoined (a Redis
 * node only after its failover; up to 10 minutes on a loaded machine).
 */
export function clusterNode(action: 'kill-node' | 'restore-node', name: string, node: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(SCRIPT, [action, name, node], { timeout: 600_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`scripts/clusters ${action} ${name} ${node} failed: ${error.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}
