/**
 * Alternating rounds: every side of a bench runs once per round, the side that
 * goes first turning from round to round, so a swing of the shared machine's
 * load does not always hit the same side; the timed runs are collected by
 * measurement and side, and summed up as medians (report.ts).
 */
import { timed, type Sample } from './measure.js';
import { throughputMeasurement, throughputOf, type ThroughputMeasurement } from './report.js';

export type SideName = 'app' | 'raw' | 'bullmq';

/** Runs `rounds` rounds of `sides`; round r starts with side r mod n and goes on in order. */
export async function alternate(rounds: number, sides: readonly (() => Promise<void>)[]): Promise<void> {
  for (let r = 0; r < rounds; r++) await inTurn(r, sides);
}

/** Round `round` of `sides` alone (for a bench whose rounds hold more than one such turn): side round mod n first, then in order. */
export async function inTurn(round: number, sides: readonly (() => Promise<void>)[]): Promise<void> {
  for (let k = 0; k < sides.length; k++) await sides[(round + k) % sides.length]!();
}

/** The timed runs of one bench, by measurement (in the order they first ran) and side. */
export class Rounds {
  private readonly modes = new Map<string, Partial<Record<SideName, Sample[]>>>();

  /** Records one round of `side` in `mode`. */
  add(mode: string, side: SideName, sample: Sample): void {
    const sides = this.modes.get(mode) ?? {};
    (sides[side] ??= []).push(sample);
    this.modes.set(mode, sides);
  }

  /** Times `run`, which moves `count` messages, as one round of `side` in `mode`. */
  async time(mode: string, side: SideName, count: number, run: () => Promise<unknown>): Promise<void> {
    this.add(mode, side, await timed(count, run));
  }

  /** Each measurement's medians and ratios; every measurement needs its `app` and `raw` rounds. */
  measurements(): ThroughputMeasurement[] {
    return [...this.modes].map(([mode, { app, raw, bullmq }]) => {
      if (app === undefined || raw === undefined) throw new Error(`${mode}: no ${app === undefined ? 'app' : 'raw'} round was recorded`);
      return throughputMeasurement(
        mode,
        { app: throughputOf(app), raw: throughputOf(raw), ...(bullmq !== undefined ? { bullmq: throughputOf(bullmq) } : {}) },
        { app, raw, ...(bullmq !== undefined ? { bullmq } : {}) },
      );
    });
  }
}
