import type { Message } from '@aws-sdk/client-sqs';
import { copyAttributes, recordAttributes, SCHEMA_VERSION_ATTRIBUTE } from './projection.js';
import type { Outgoing } from './publisher.js';

/**
 * The DLQ write of a received message's record. A failed, unknown-URN or
 * poison record carries the projection of its own bytes beside the message's
 * riders; a version-gated raw record carries the message's attributes without
 * `bq-schema-version` (which would gate it again). On a FIFO DLQ it keeps the
 * message's group, and SQS's message id deduplicates a second write of the
 * same delivery.
 */
export function deadLetterOutgoing(record: Buffer, message: Message, versionGated: boolean): Outgoing {
  const groupId = message.Attributes?.MessageGroupId;
  return {
    body: record,
    attributes: versionGated
      ? copyAttributes(message.MessageAttributes, [SCHEMA_VERSION_ATTRIBUTE])
      : recordAttributes(record, message.MessageAttributes),
    ...(groupId !== undefined ? { groupId } : {}),
    ...(message.MessageId !== undefined ? { deduplicationId: message.MessageId } : {}),
  };
}
