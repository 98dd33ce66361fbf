import type { Connection, EventContext, Message as AmqpMessage, Receiver, Sender } from 'rhea';

/** Artemis's management address: a request sent here is answered on its `reply-to`. */
const MANAGEMENT_ADDRESS = 'activemq.management';

/** Artemis's built-in `max-delivery-attempts`: its settings JSON leaves out a value nobody set. */
const ARTEMIS_DEFAULT_MAX_DELIVERY_ATTEMPTS = 10;

/**
 * Asks Artemis for the `max-delivery-attempts` its address settings give
 * `queue`: the management operation `getAddressSettingsAsJSON` on the
 * `broker` resource, request/reply over AMQP (a temporary reply queue).
 * Resolves with the setting (0 or -1: unlimited; Artemis's default 10 when
 * no setting names it); rejects when the broker
 * refuses the request (a user without the `manage` role), answers with a
 * failure or without the setting, or does not answer within `timeoutMs`.
 */
export async function queryMaxDeliveryAttempts(connection: Connection, queue: string, timeoutMs: number): Promise<number> {
  const answer = await request(connection, 'getAddressSettingsAsJSON', [queue], timeoutMs);
  // The reply body is a JSON array holding the settings, themselves a JSON string.
  const [settings] = JSON.parse(answer) as unknown[];
  const value = (typeof settings === 'string' ? JSON.parse(settings) : settings) as Record<string, unknown> | null;
  if (value === null || typeof value !== 'object') throw new Error('getAddressSettingsAsJSON answered without settings');
  if (value.maxDeliveryAttempts === undefined) return ARTEMIS_DEFAULT_MAX_DELIVERY_ATTEMPTS;
  const max = Number(value.maxDeliveryAttempts);
  if (!Number.isInteger(max)) throw new Error('the address settings carry no integer maxDeliveryAttempts');
  return max;
}

/** One management operation on the `broker` resource; resolves with the reply's JSON body. */
function request(connection: Connection, operation: string, args: unknown[], timeoutMs: number): Promise<string> {
  let replies: Receiver | undefined;
  let sender: Sender | undefined;
  let timer: NodeJS.Timeout | undefined;
  const id = `bq-management-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  let gone: (() => void) | undefined;
  const answer = new Promise<string>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from ${MANAGEMENT_ADDRESS} within ${timeoutMs} ms`)), timeoutMs);
    // Neither a close nor a lost connection must hold the event loop until the time-out.
    timer.unref();
    gone = () => reject(new Error('the connection closed before the answer'));
    connection.once('disconnected', gone);
    const refused = (what: string) => (context: EventContext) => {
      const error = (context.receiver ?? context.sender)?.error as { condition?: string; description?: string } | undefined;
      reject(new Error(`${what}: ${[error?.condition, error?.description].filter(Boolean).join(': ') || 'refused'}`));
    };
    replies = connection.open_receiver({ source: { address: '', dynamic: true }, autoaccept: true });
    replies.on('receiver_error', refused('the reply queue was refused'));
    replies.on('message', (context: EventContext) => {
      const message = context.message as AmqpMessage;
      if (message.correlation_id !== id) return;
      const body = typeof message.body === 'string' ? message.body : String(message.body ?? '');
      if (message.application_properties?._AMQ_OperationSucceeded === true) resolve(body);
      else reject(new Error(`${operation} failed: ${body.slice(0, 200)}`));
    });
    replies.once('receiver_open', (context: EventContext) => {
      // A refused reply queue opens with no source, and its error follows (rejecting above).
      const replyTo = (context.receiver?.source as { address?: string } | null | undefined)?.address;
      if (replyTo === undefined || replyTo === '') return;
      sender = connection.open_sender({ target: { address: MANAGEMENT_ADDRESS } });
      sender.on('sender_error', refused(`${MANAGEMENT_ADDRESS} was refused`));
      sender.on('rejected', (ctx: EventContext) => {
        const error = ctx.delivery?.remote_state?.error as { condition?: string; description?: string } | undefined;
        reject(new Error(`${operation} was rejected: ${[error?.condition, error?.description].filter(Boolean).join(': ') || 'rejected'}`));
      });
      sender.on('released', () => reject(new Error(`${operation} was released by the broker`)));
      sender.once('sendable', () => {
        sender!.send({
          message_id: id,
          reply_to: replyTo,
          application_properties: { _AMQ_ResourceName: 'broker', _AMQ_OperationName: operation },
          body: JSON.stringify(args),
        });
      });
    });
  });
  return answer.finally(() => {
    clearTimeout(timer);
    if (gone !== undefined) connection.removeListener('disconnected', gone);
    for (const link of [sender, replies]) {
      try {
        if (link !== undefined && !link.is_closed() && connection.is_open()) link.close();
      } catch {
        // The link went with its connection: nothing left to close.
      }
    }
  });
}
