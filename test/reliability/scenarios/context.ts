import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrokerDriver, DriverTarget } from '../drivers/driver.js';
import { fileLogger } from '../file-logger.js';
import type { WorkerBundle } from '../pool.js';
import type { Rng } from '../rng.js';

/** What every scenario of one driver gets. */
export interface ScenarioContext {
  readonly driver: BrokerDriver;
  /** The lab broker's URL. */
  readonly url: string;
  readonly rng: Rng;
  readonly bundle: WorkerBundle;
  /** This scenario's folder: worker ledgers and logs, the controller's log. */
  readonly dir: string;
  /** A unique suffix for queue names. */
  readonly runId: string;
  /** Progress lines for the person watching. */
  readonly say: (line: string) => void;
}

/** The controller's own target (producer, tools), logging to `<dir>/controller.log`. */
export function controllerTarget(context: ScenarioContext, queue: string, role: DriverTarget['role']): DriverTarget {
  mkdirSync(context.dir, { recursive: true });
  return { url: context.url, logger: fileLogger(join(context.dir, 'controller.log')), queue, role };
}
