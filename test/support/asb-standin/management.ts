// Request/response nodes: `$cbs` (put-token: any token is accepted),
// `<entity>/$management` (the operations the SDKs call for lock renewal,
// scheduling, peeking and settling by lock token) and `$standin` (test-only
// control: queue configuration and counts). An operation that is not modelled
// answers 501 and is logged, never approximated.
import type { Entity } from './entity.js';
import { LockLostError, NotAllowedError, SessionCannotBeLockedError } from './entity.js';
import { NotModelledError, type Namespace } from './namespace.js';
import { types, type Entries } from './wire.js';

/** A response: status code and description in the application properties, an optional typed body. */
export interface Response {
  readonly status: number;
  readonly description: string;
  readonly condition?: string;
  readonly body?: unknown;
}

export interface ManagementContext {
  readonly namespace: Namespace;
  /** Hands newly deliverable messages of an entity to waiting receivers. */
  readonly pump: (entity: Entity) => void;
  readonly log: (line: string) => void;
  readonly now: () => number;
}

/** Answers one request sent to `address`. */
export function answer(context: ManagementContext, address: string, request: any): Response {
  const props = request.application_properties ?? {};
  const operation = String(props.operation ?? '');
  try {
    if (address === '$cbs') return putToken(operation);
    if (address === '$standin') return control(context, operation, request.body ?? {});
    const node = address.replace(/\/\$management$/i, '');
    if (node === address) throw new NotModelledError(`no request node "${address}"`);
    return manage(context, context.namespace.resolve(node), operation, request.body ?? {});
  } catch (error) {
    if (error instanceof LockLostError) return { status: 410, description: error.message, condition: error.condition };
    if (error instanceof SessionCannotBeLockedError) return { status: 410, description: error.message, condition: error.condition };
    if (error instanceof NotAllowedError) return { status: 400, description: error.message, condition: error.condition };
    if (error instanceof NotModelledError) {
      context.log(`NOT MODELLED: ${error.message}`);
      return { status: 501, description: error.message, condition: error.condition };
    }
    context.log(`request "${operation}" on ${address} failed: ${error instanceof Error ? error.stack : String(error)}`);
    return { status: 500, description: error instanceof Error ? error.message : String(error), condition: 'amqp:internal-error' };
  }
}

function putToken(operation: string): Response {
  if (operation !== 'put-token') throw new NotModelledError(`$cbs operation "${operation}"`);
  return { status: 202, description: 'Accepted' };
}

function manage(context: ManagementContext, entity: Entity, operation: string, body: any): Response {
  const now = context.now();
  switch (operation) {
    case 'com.microsoft:renew-lock': {
      const tokens = tokenList(body['lock-tokens']);
      const expirations = tokens.map((token) => entity.renew(token, now));
      return ok({ expirations: types.wrap_array(expirations, 0x83) });
    }
    case 'com.microsoft:renew-session-lock': {
      const expiration = entity.renewSession(String(body['session-id']), now);
      return ok({ expiration: types.wrap_timestamp(expiration) });
    }
    case 'com.microsoft:update-disposition': {
      const tokens = tokenList(body['lock-tokens']);
      const status = String(body['disposition-status']);
      const modify = propertiesToModify(body['properties-to-modify']);
      for (const token of tokens) {
        if (status === 'completed') entity.complete(token);
        else if (status === 'abandoned') entity.abandon(token, now, modify);
        else if (status === 'defered' || status === 'deferred') entity.defer(token, modify);
        else if (status === 'suspended') entity.deadLetterMessage(token, now, body['deadletter-reason'], body['deadletter-description'], modify);
        else throw new NotModelledError(`disposition-status "${status}"`);
      }
      context.pump(entity);
      return ok({});
    }
    case 'com.microsoft:schedule-message': {
      const sequenceNumbers = (body.messages ?? []).map((item: any) => entity.enqueue(Buffer.from(item.message), now));
      context.pump(entity);
      return ok({ 'sequence-numbers': types.wrap_array(sequenceNumbers, 0x81) });
    }
    case 'com.microsoft:cancel-scheduled-message': {
      for (const sequenceNumber of body['sequence-numbers'] ?? []) entity.cancelScheduled(Number(sequenceNumber), now);
      return ok({});
    }
    case 'com.microsoft:peek-message': {
      const from = Number(body['from-sequence-number'] ?? 1);
      const count = Number(body['message-count'] ?? 1);
      const session = body['session-id'];
      const peeked = entity.peek(from, count, typeof session === 'string' ? session : undefined);
      if (peeked.length === 0) return { status: 204, description: 'No messages' };
      return ok({
        messages: types.wrap_list(peeked.map((m) => types.wrap_map({ message: types.wrap_binary(entity.compose(m)) }))),
      });
    }
    default:
      throw new NotModelledError(`$management operation "${operation}" on ${entity.name}`);
  }
}

/** Test-only control operations (not Service Bus): configure a queue, read its counts. */
function control(context: ManagementContext, operation: string, body: any): Response {
  const name = String(body.name ?? '');
  if (name === '') throw new NotModelledError('a $standin request names no queue');
  const queue = context.namespace.queue(name);
  if (operation === 'configure-queue') {
    if (body['max-delivery-count'] !== undefined) queue.config.maxDeliveryCount = Number(body['max-delivery-count']);
    if (body['lock-duration-ms'] !== undefined) queue.config.lockDurationMs = Number(body['lock-duration-ms']);
    if (body.status !== undefined) queue.config.status = body.status === 'SendDisabled' ? 'SendDisabled' : 'Active';
    if (body['requires-duplicate-detection'] !== undefined) queue.config.requiresDuplicateDetection = body['requires-duplicate-detection'] === true;
    if (body['duplicate-detection-window-ms'] !== undefined) queue.config.duplicateDetectionWindowMs = Number(body['duplicate-detection-window-ms']);
    if (body['requires-session'] !== undefined) queue.config.requiresSession = body['requires-session'] === true;
    context.pump(queue);
    return ok({});
  }
  if (operation === 'queue-counts') {
    const now = context.now();
    const counts = queue.counts(now);
    const dead = queue.deadLetter!.counts(now);
    return ok({ ...counts, 'dead-letter': dead.active + dead.locked + dead.scheduled + dead.deferred });
  }
  throw new NotModelledError(`$standin operation "${operation}"`);
}

function ok(body: Record<string, unknown>): Response {
  return { status: 200, description: 'OK', body: types.wrap_map(body) };
}

function tokenList(value: unknown): Buffer[] {
  if (!Array.isArray(value)) throw new NotModelledError('a request without lock-tokens');
  return value.map((token) => (Buffer.isBuffer(token) ? token : Buffer.from(String(token).replace(/-/g, ''), 'hex')));
}

function propertiesToModify(value: unknown): Entries | undefined {
  if (value === undefined || value === null || typeof value !== 'object') return undefined;
  return Object.entries(value as Record<string, unknown>).map(([k, v]) => [types.wrap_string(k), types.wrap(v)]);
}

/** Encodes a response message for `request`. */
export function responseMessage(request: any, response: Response): any {
  const props: Record<string, unknown> = {
    statusCode: response.status,
    'status-code': response.status,
    statusDescription: response.description,
    'status-description': response.description,
  };
  if (response.condition !== undefined) props.errorCondition = response.condition;
  const message: any = {
    correlation_id: request.message_id ?? request.correlation_id,
    application_properties: props,
  };
  if (response.body !== undefined) message.body = response.body;
  return message;
}
