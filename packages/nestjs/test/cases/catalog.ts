/** The tests' URN catalog, registered as an application registers its own. */
export interface OrderCreated {
  order_id: number;
  fail?: 'once' | 'always' | 'hang';
}

export interface PaymentTaken {
  payment_id: string;
}

export const ORDER_CREATED = 'urn:babel:orders:created';
export const PAYMENT_TAKEN = 'urn:babel:payments:taken';

declare module '@babelqueue/nestjs' {
  interface BabelQueueCatalog {
    'urn:babel:orders:created': OrderCreated;
    'urn:babel:payments:taken': PaymentTaken;
  }
}
