import type { Decision, Transport } from '@babelqueue/core';
import type { Delivery } from '@babelqueue/core/binding';

/** What the wrapper reports for every settlement. */
export interface SettleHooks {
  /** Called as a settlement starts, before the binding sends anything. */
  readonly started: (delivery: Delivery, decision: Decision) => void;
  /** Called once the binding's settle resolved (the broker has it, where it confirms). */
  readonly settled: (delivery: Delivery, decision: Decision) => void;
}

/**
 * The binding's own transport, with every delivery's `settle` watched: the
 * worker writes the settlement to its ledger and, when told to, kills itself
 * while a settlement is in flight. Everything else is the binding's, untouched.
 */
export function watchSettlements(transport: Transport, hooks: SettleHooks): Transport {
  const watch = (delivery: Delivery): Delivery => {
    const settle = async (decision: Decision) => {
      hooks.started(delivery, decision);
      await delivery.settle(decision);
      hooks.settled(delivery, decision);
    };
    // A proxy, not a copy: bindings' deliveries are class instances with private state.
    return new Proxy(delivery, {
      get(target, property) {
        if (property === 'settle') return settle;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
  return new Proxy(transport, {
    get(target, property) {
      if (property === 'consume') {
        const consume: Transport['consume'] = (queue, onDelivery, options) =>
          target.consume(queue, (delivery) => onDelivery(watch(delivery)), options);
        return consume;
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
