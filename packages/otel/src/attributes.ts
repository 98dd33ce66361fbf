/** Span and metric attribute names (OTel messaging semantic conventions, plus `messaging.babelqueue.*`). */
export const ATTR = {
  system: 'messaging.system',
  operation: 'messaging.operation',
  operationName: 'messaging.operation.name',
  destination: 'messaging.destination.name',
  messageId: 'messaging.message.id',
  conversationId: 'messaging.message.conversation_id',
  attempts: 'messaging.babelqueue.attempts',
  urn: 'messaging.babelqueue.urn',
  decision: 'messaging.babelqueue.decision',
  reason: 'messaging.babelqueue.reason',
  outcome: 'messaging.babelqueue.outcome',
  errorType: 'error.type',
} as const;

/** `messaging.system` on every span and metric. */
export const SYSTEM = 'babelqueue';
