import type { Decision } from '@babelqueue/core';

/**
 * Guards `settle`: a delivery is settled once. A dead-letter write that threw
 * leaves it unsettled, so the runtime may still settle it as `unsettled`.
 */
export class SettleOnce {
  private done = false;

  async run(decision: Decision, execute: (decision: Decision) => Promise<void>): Promise<void> {
    if (this.done) throw new Error(`delivery already settled; cannot ${decision.kind} it again`);
    await execute(decision);
    this.done = true;
  }
}
