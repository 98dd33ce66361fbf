import type { Decision } from '../settlement/decision.js';

/** The error a second `settle` of one delivery throws: the runtime settles each delivery once. */
export function alreadySettled(queue: string): Error {
  return new Error(`delivery of "${queue}" was already settled`);
}

/**
 * Guards `settle`: a delivery is settled once. The guard is taken only when
 * `execute` succeeds, so a dead-letter write that threw leaves the delivery
 * unsettled and the runtime may still settle it as `unsettled`.
 */
export class SettleOnce {
  private done = false;

  /** Whether a settlement went through. */
  get settled(): boolean {
    return this.done;
  }

  async run(decision: Decision, execute: (decision: Decision) => Promise<void>): Promise<void> {
    if (this.done) throw new Error(`delivery already settled; cannot ${decision.kind} it again`);
    await execute(decision);
    this.done = true;
  }
}
