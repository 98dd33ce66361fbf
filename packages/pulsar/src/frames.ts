/**
 * The JSON frames of Pulsar's WebSocket API (v2), as the 4.0 broker reads and
 * writes them (org.apache.pulsar.websocket.data): only the fields the binding
 * uses. Payloads and message ids are base64.
 */

/** Producer → broker: one message. */
export interface ProducerMessage {
  readonly payload: string;
  readonly properties?: Readonly<Record<string, string>>;
  /** Echoed in the receipt, to pair it with its send. */
  readonly context: string;
  /** Deliver no earlier than this many ms after the broker stored it (Shared and Key_Shared subscriptions only). */
  readonly deliverAfterMs?: number;
}

/** Broker → producer: the send receipt. `result` is `ok`, or `send-error:<code>` with `errorMsg`. */
export interface ProducerAck {
  readonly result: string;
  readonly messageId?: string;
  readonly errorMsg?: string;
  readonly context?: string;
}

/** Broker → consumer: one message. */
export interface ConsumerMessage {
  readonly messageId: string;
  readonly payload: string;
  readonly properties?: Record<string, string>;
  /** ISO-8601, set by the broker when it stored the message. */
  readonly publishTime?: string;
  /** 0 on the first delivery; advanced by a negative acknowledgement on Shared and Key_Shared subscriptions. */
  readonly redeliveryCount?: number;
  readonly key?: string;
}

/**
 * Consumer → broker. Without `type` it is an acknowledgement; the broker sends
 * no reply to acknowledgements, negative acknowledgements or permits.
 */
export type ConsumerCommand =
  | { readonly messageId: string }
  | { readonly type: 'negativeAcknowledge'; readonly messageId: string }
  /** Pull mode: let the broker push this many more messages. */
  | { readonly type: 'permit'; readonly permitMessages: number };

/** Parses a frame from the broker; undefined for anything that is not a JSON object. */
export function parseFrame(data: unknown): Record<string, unknown> | undefined {
  try {
    const text = Buffer.isBuffer(data) ? data.toString('utf8') : String(data);
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
