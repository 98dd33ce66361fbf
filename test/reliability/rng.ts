/**
 * Seeded randomness: every random choice of a run (message scripts, kill
 * times and points, fuzzed bodies) comes from one seed, printed at the start,
 * so `--seed` replays the same choices. The timing of the processes is not
 * replayed: the same seed gives the same plan, not the same interleaving.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1) (mulberry32). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An integer in [min, max]. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** One key of `weights`, with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    let roll = this.next() * entries.reduce((sum, [, w]) => sum + w, 0);
    for (const [key, weight] of entries) {
      roll -= weight;
      if (roll < 0) return key;
    }
    return entries[entries.length - 1]![0];
  }

  /** An independent generator for one part of the run, derived from this one. */
  fork(): Rng {
    return new Rng(this.int(0x1_0000_0000));
  }
}

/** A seed for a run that gave none. */
export function freshSeed(): number {
  return Math.floor(Math.random() * 0x1_0000_0000);
}
