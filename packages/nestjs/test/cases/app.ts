/**
 * A small NestJS application for the tests: an OrdersService injected by type
 * into the handler class, a DLQ reader on a second (named) module, and a
 * payments handler for a module on another broker.
 */
import type { Message } from '@babelqueue/core';
import { Injectable } from '@nestjs/common';
import { BabelQueueClient, InjectBabelQueue, OnJob } from '@babelqueue/nestjs';
import type { OrderCreated, PaymentTaken } from './catalog.js';

/** What the handlers saw; one per test application. */
@Injectable()
export class Ledger {
  readonly handled: { id: string; orderId: number; attempts: number; queue: string }[] = [];
  readonly failures: { id: string; attempts: number }[] = [];
  readonly dead: { id: string; reason: unknown; attempts: unknown }[] = [];
  readonly payments: string[] = [];
  /** Whether a `fail: 'hang'` message hangs (the first application) or is handled (the one after it). */
  hangs = true;
  /** Called when a handler starts hanging. */
  started: (() => void) | undefined;
}

/** The service the handler depends on: the handler gets it from Nest's container. */
@Injectable()
export class OrdersService {
  constructor(private readonly ledger: Ledger) {}

  record(data: OrderCreated, message: Message<OrderCreated>): void {
    this.ledger.handled.push({ id: message.id, orderId: data.order_id, attempts: message.attempts, queue: message.queue });
  }
}

@Injectable()
export class OrdersHandler {
  constructor(private readonly orders: OrdersService, private readonly ledger: Ledger) {}

  @OnJob('urn:babel:orders:created')
  async created(data: OrderCreated, message: Message<OrderCreated>): Promise<void> {
    if (data.fail === 'hang' && this.ledger.hangs) {
      this.ledger.started?.();
      await new Promise(() => undefined); // until the shutdown deadline leaves it unsettled
    }
    if (data.fail === 'always' || (data.fail === 'once' && message.attempts === 1)) {
      this.ledger.failures.push({ id: message.id, attempts: message.attempts });
      throw new Error(`order ${data.order_id} failed on attempt ${message.attempts}`);
    }
    this.orders.record(data, message);
  }
}

/** Reads the DLQ through a second module named "dlq". */
@Injectable()
export class DeadLetterReader {
  constructor(private readonly ledger: Ledger) {}

  @OnJob('urn:babel:orders:created', { name: 'dlq' })
  read(_data: OrderCreated, message: Message<OrderCreated>): void {
    const block = (message.envelope as unknown as { dead_letter?: { reason?: unknown; attempts?: unknown } }).dead_letter;
    this.ledger.dead.push({ id: message.id, reason: block?.reason, attempts: block?.attempts });
  }
}

/** Handles payments on a module named "payments" (another broker in the tests). */
@Injectable()
export class PaymentsHandler {
  constructor(private readonly ledger: Ledger) {}

  @OnJob('urn:babel:payments:taken', { name: 'payments' })
  taken(data: PaymentTaken): void {
    this.ledger.payments.push(data.payment_id);
  }
}

/** Publishes through the injected client, as an HTTP controller or a service would. */
@Injectable()
export class Checkout {
  constructor(readonly queue: BabelQueueClient) {}

  place(orderId: number, fail?: OrderCreated['fail']): Promise<string> {
    return this.queue.publish('urn:babel:orders:created', { order_id: orderId, ...(fail !== undefined ? { fail } : {}) });
  }
}

/** Publishes payments through the client of the module named "payments". */
@Injectable()
export class PaymentsCheckout {
  constructor(@InjectBabelQueue('payments') readonly payments: BabelQueueClient) {}

  take(paymentId: string): Promise<string> {
    return this.payments.publish('urn:babel:payments:taken', { payment_id: paymentId });
  }
}
