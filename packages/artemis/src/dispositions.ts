import rhea, { type Connection } from 'rhea';

/** What this module reads of rhea's (untyped) receiver-side bookkeeping. */
interface RheaDelivery {
  readonly settled?: boolean;
  readonly state?: unknown;
}
interface Incoming {
  updated: RheaDelivery[];
  process(session: unknown): void;
}
interface Session {
  readonly incoming: Incoming;
}

const areEquivalent = (rhea as unknown as { message: { are_outcomes_equivalent(a: unknown, b: unknown): boolean } }).message.are_outcomes_equivalent;

/**
 * Makes every session of `connection` send each run of equal settlements in a
 * disposition of its own.
 *
 * rhea (3.0.5) writes the settlements made since its last write in ranges
 * `first..last`, one outcome per range, and it merges a delivery into a range
 * of one delivery without comparing their outcomes: when the head delivery
 * is accepted and the next one released in the same tick, both go out as one
 * `accepted` disposition, and Artemis deletes the record behind the one that
 * was meant (a console delete at the head of a DLQ lost the next record, every
 * time; a retry `modified` next to an `accepted` is lost the same way). Here
 * the list is cut wherever two neighbours differ in outcome or settlement
 * before rhea writes it, so each range it writes holds one outcome.
 */
export function separateOutcomes(connection: Connection): void {
  const target = connection as unknown as { create_session(size?: number): Session };
  const create = target.create_session.bind(connection);
  target.create_session = (size?: number) => {
    const session = create(size);
    const incoming = session.incoming;
    const write = incoming.process.bind(incoming);
    incoming.process = (owner: unknown) => {
      const updated = incoming.updated;
      if (updated.length < 2) return write(owner);
      let run: RheaDelivery[] = [];
      for (const delivery of updated) {
        const previous = run[run.length - 1];
        if (previous !== undefined && (previous.settled !== delivery.settled || !areEquivalent(previous.state, delivery.state))) {
          incoming.updated = run;
          write(owner);
          run = [];
        }
        run.push(delivery);
      }
      incoming.updated = run;
      write(owner);
    };
    return session;
  };
}
