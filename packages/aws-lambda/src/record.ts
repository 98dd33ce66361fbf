import type { Message, MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { SQSMessageAttributes, SQSRecord } from 'aws-lambda';

/**
 * The queue a record came from: the last segment of its `eventSourceARN`
 * (`arn:aws:sqs:<region>:<account>:<queue>`); undefined when it is not an
 * SQS queue ARN.
 */
export function queueOfArn(arn: string | undefined): string | undefined {
  if (typeof arn !== 'string') return undefined;
  const parts = arn.split(':');
  if (parts.length !== 6 || parts[0] !== 'arn' || parts[2] !== 'sqs') return undefined;
  const name = parts[5]!.trim();
  return name === '' ? undefined : name;
}

/** The String and Number message attributes of a record, as strings (Binary ones are left out), as the SQS binding reads them. */
export function headersOfRecord(attributes: SQSMessageAttributes | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (typeof value?.stringValue === 'string') out[name] = value.stringValue;
  }
  return out;
}

/**
 * The record as `ReceiveMessage` would have returned it (the SQS binding's
 * shape), for the dead-letter write: the event source mapping spells the same
 * fields in camel case and carries binary values as base64.
 */
export function messageOfRecord(record: SQSRecord): Message {
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(record.messageAttributes ?? {})) {
    if (value === undefined) continue;
    attributes[name] = {
      DataType: value.dataType,
      ...(typeof value.stringValue === 'string' ? { StringValue: value.stringValue } : {}),
      ...(typeof value.binaryValue === 'string' ? { BinaryValue: Buffer.from(value.binaryValue, 'base64') } : {}),
    };
  }
  const system: Record<string, string> = {};
  for (const [name, value] of Object.entries(record.attributes ?? {})) {
    if (typeof value === 'string') system[name] = value;
  }
  return {
    MessageId: record.messageId,
    ReceiptHandle: record.receiptHandle,
    Body: record.body,
    Attributes: system,
    MessageAttributes: attributes,
  };
}
