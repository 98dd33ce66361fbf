/**
 * The commands of Pulsar's binary protocol (PulsarApi.proto's BaseCommand)
 * that a consumer sends and reads, with their field numbers. Only the fields
 * the binding uses are written or read; others are skipped.
 */
import { ProtoReader, ProtoWriter } from './proto.js';

/** BaseCommand.Type: each command's type, also its field number in BaseCommand. */
export const CommandType = {
  CONNECT: 2,
  CONNECTED: 3,
  SUBSCRIBE: 4,
  MESSAGE: 9,
  ACK: 10,
  FLOW: 11,
  SUCCESS: 13,
  ERROR: 14,
  CLOSE_PRODUCER: 15,
  CLOSE_CONSUMER: 16,
  PING: 18,
  PONG: 19,
  REDELIVER_UNACKNOWLEDGED_MESSAGES: 20,
  PARTITIONED_METADATA: 21,
  PARTITIONED_METADATA_RESPONSE: 22,
  LOOKUP: 23,
  LOOKUP_RESPONSE: 24,
  REACHED_END_OF_TOPIC: 27,
  ACTIVE_CONSUMER_CHANGE: 31,
  AUTH_CHALLENGE: 36,
  AUTH_RESPONSE: 37,
  TOPIC_MIGRATED: 68,
} as const;

/** The protocol version the binding speaks (v21: Pulsar 3.x and 4.x). */
export const PROTOCOL_VERSION = 21;

/** CommandSubscribe.SubType by the binding's names. */
const SUB_TYPES = { Exclusive: 0, Shared: 1, Failover: 2, Key_Shared: 3 } as const;

/** A message's position: MessageIdData, with its encoded bytes for acks that name the whole entry. */
export interface MessageId {
  readonly ledgerId: number;
  readonly entryId: number;
  /** -1 on a topic that is not partitioned. */
  readonly partition: number;
  /** -1 unless the id names one message of a batch. */
  readonly batchIndex: number;
}

function base(type: number, build: (writer: ProtoWriter) => void): Buffer {
  return new ProtoWriter().uint(1, type).message(type, build).finish();
}

function writeMessageId(writer: ProtoWriter, id: MessageId): void {
  writer.uint(1, id.ledgerId).uint(2, id.entryId);
  if (id.partition >= 0) writer.uint(3, id.partition);
  if (id.batchIndex >= 0) writer.uint(4, id.batchIndex);
}

/** Encodes a MessageIdData on its own (the message id the deliveries carry, base64). */
export function encodeMessageId(id: MessageId): Buffer {
  const writer = new ProtoWriter();
  writeMessageId(writer, id);
  return writer.finish();
}

export interface ConnectFields {
  readonly clientVersion: string;
  readonly authMethod?: string;
  readonly authData?: string;
  /** Through a proxy: the broker to be connected to. */
  readonly proxyToBrokerUrl?: string;
}

export function connect(fields: ConnectFields): Buffer {
  return base(CommandType.CONNECT, (w) => {
    w.string(1, fields.clientVersion).uint(4, PROTOCOL_VERSION);
    if (fields.authData !== undefined) w.string(5, fields.authMethod ?? 'token').string(3, fields.authData);
    if (fields.proxyToBrokerUrl !== undefined) w.string(6, fields.proxyToBrokerUrl);
  });
}

/** The answer to an AUTH_CHALLENGE (a broker refreshing a token). */
export function authResponse(clientVersion: string, authMethod: string, authData: string): Buffer {
  return base(CommandType.AUTH_RESPONSE, (w) => {
    w.string(1, clientVersion).message(2, (data) => data.string(1, authMethod).string(2, authData)).uint(3, PROTOCOL_VERSION);
  });
}

export function partitionedMetadata(topic: string, requestId: number): Buffer {
  return base(CommandType.PARTITIONED_METADATA, (w) => w.string(1, topic).uint(2, requestId));
}

export function lookup(topic: string, requestId: number, authoritative: boolean): Buffer {
  return base(CommandType.LOOKUP, (w) => w.string(1, topic).uint(2, requestId).bool(3, authoritative));
}

export interface SubscribeFields {
  readonly topic: string;
  readonly subscription: string;
  readonly subType: keyof typeof SUB_TYPES;
  readonly consumerId: number;
  readonly requestId: number;
  readonly consumerName: string;
  readonly earliest: boolean;
}

export function subscribe(fields: SubscribeFields): Buffer {
  return base(CommandType.SUBSCRIBE, (w) => {
    w.string(1, fields.topic)
      .string(2, fields.subscription)
      .uint(3, SUB_TYPES[fields.subType])
      .uint(4, fields.consumerId)
      .uint(5, fields.requestId)
      .string(6, fields.consumerName)
      .uint(13, fields.earliest ? 1 : 0);
  });
}

export function flow(consumerId: number, permits: number): Buffer {
  return base(CommandType.FLOW, (w) => w.uint(1, consumerId).uint(2, permits));
}

/** An individual acknowledgement of whole entries (never a batch index: see {@link BatchTracker}). */
export function ack(consumerId: number, ids: readonly MessageId[]): Buffer {
  return base(CommandType.ACK, (w) => {
    w.uint(1, consumerId).uint(2, 0);
    for (const id of ids) w.message(3, (m) => writeMessageId(m, id));
  });
}

export function redeliver(consumerId: number, ids: readonly MessageId[]): Buffer {
  return base(CommandType.REDELIVER_UNACKNOWLEDGED_MESSAGES, (w) => {
    w.uint(1, consumerId);
    for (const id of ids) w.message(2, (m) => writeMessageId(m, id));
  });
}

export function closeConsumer(consumerId: number, requestId: number): Buffer {
  return base(CommandType.CLOSE_CONSUMER, (w) => w.uint(1, consumerId).uint(2, requestId));
}

export function ping(): Buffer {
  return base(CommandType.PING, () => undefined);
}

export function pong(): Buffer {
  return base(CommandType.PONG, () => undefined);
}

/** A command read from the broker: its type and the fields the binding uses. */
export interface Incoming {
  type: number;
  requestId?: number;
  consumerId?: number;
  /** ERROR, a failed lookup: the ServerError name and the broker's message. */
  error?: string;
  message?: string;
  /** MESSAGE. */
  messageId?: MessageId;
  redeliveryCount?: number;
  /** CONNECTED. */
  serverVersion?: string;
  maxMessageSize?: number;
  /** LOOKUP_RESPONSE: 0 redirect, 1 connect, 2 failed. */
  lookup?: number;
  brokerServiceUrl?: string;
  brokerServiceUrlTls?: string;
  authoritative?: boolean;
  proxyThroughServiceUrl?: boolean;
  /** PARTITIONED_METADATA_RESPONSE: 0 success, 1 failed. */
  response?: number;
  partitions?: number;
  /** TOPIC_MIGRATED: 0 producer, 1 consumer. */
  resourceType?: number;
}

/** ServerError by code, for errors a person reads. */
const SERVER_ERRORS = [
  'UnknownError', 'MetadataError', 'PersistenceError', 'AuthenticationError', 'AuthorizationError', 'ConsumerBusy',
  'ServiceNotReady', 'ProducerBlockedQuotaExceededError', 'ProducerBlockedQuotaExceededException', 'ChecksumError',
  'UnsupportedVersionError', 'TopicNotFound', 'SubscriptionNotFound', 'ConsumerNotFound', 'TooManyRequests',
  'TopicTerminatedError', 'ProducerBusy', 'InvalidTopicName', 'IncompatibleSchema', 'ConsumerAssignError',
  'TransactionCoordinatorNotFound', 'InvalidTxnStatus', 'NotAllowedError', 'TransactionConflict', 'TransactionNotFound',
  'ProducerFenced',
];

function serverError(code: number): string {
  return SERVER_ERRORS[code] ?? `ServerError ${code}`;
}

function readMessageId(reader: ProtoReader): MessageId {
  let ledgerId = 0;
  let entryId = 0;
  let partition = -1;
  let batchIndex = -1;
  while (reader.next()) {
    switch (reader.field) {
      case 1: ledgerId = reader.uint(); break;
      case 2: entryId = reader.uint(); break;
      case 3: partition = reader.int32(); break;
      case 4: batchIndex = reader.int32(); break;
      default: reader.skip();
    }
  }
  return { ledgerId, entryId, partition, batchIndex };
}

/** Decodes a BaseCommand: its type, and the fields of its one sub-command the binding reads. */
export function decodeCommand(buf: Uint8Array, start: number, end: number): Incoming {
  const outer = new ProtoReader(buf, start, end);
  const command: Incoming = { type: 0 };
  while (outer.next()) {
    if (outer.field === 1) {
      command.type = outer.uint();
      continue;
    }
    if (outer.field < 2) {
      outer.skip();
      continue;
    }
    readSubCommand(outer.field, outer.nested(), command);
  }
  return command;
}

function readSubCommand(type: number, r: ProtoReader, into: Incoming): void {
  while (r.next()) {
    const f = r.field;
    switch (type) {
      case CommandType.MESSAGE:
        if (f === 1) into.consumerId = r.uint();
        else if (f === 2) into.messageId = readMessageId(r.nested());
        else if (f === 3) into.redeliveryCount = r.uint();
        else r.skip();
        break;
      case CommandType.CONNECTED:
        if (f === 1) into.serverVersion = r.string();
        else if (f === 3) into.maxMessageSize = r.uint();
        else r.skip();
        break;
      case CommandType.SUCCESS:
        if (f === 1) into.requestId = r.uint();
        else r.skip();
        break;
      case CommandType.ERROR:
        if (f === 1) into.requestId = r.uint();
        else if (f === 2) into.error = serverError(r.uint());
        else if (f === 3) into.message = r.string();
        else r.skip();
        break;
      case CommandType.LOOKUP_RESPONSE:
        if (f === 1) into.brokerServiceUrl = r.string();
        else if (f === 2) into.brokerServiceUrlTls = r.string();
        else if (f === 3) into.lookup = r.uint();
        else if (f === 4) into.requestId = r.uint();
        else if (f === 5) into.authoritative = r.bool();
        else if (f === 6) into.error = serverError(r.uint());
        else if (f === 7) into.message = r.string();
        else if (f === 8) into.proxyThroughServiceUrl = r.bool();
        else r.skip();
        break;
      case CommandType.PARTITIONED_METADATA_RESPONSE:
        if (f === 1) into.partitions = r.uint();
        else if (f === 2) into.requestId = r.uint();
        else if (f === 3) into.response = r.uint();
        else if (f === 4) into.error = serverError(r.uint());
        else if (f === 5) into.message = r.string();
        else r.skip();
        break;
      case CommandType.CLOSE_CONSUMER:
      case CommandType.REACHED_END_OF_TOPIC:
      case CommandType.ACTIVE_CONSUMER_CHANGE:
        if (f === 1) into.consumerId = r.uint();
        else r.skip();
        break;
      case CommandType.TOPIC_MIGRATED:
        if (f === 1) into.consumerId = r.uint();
        else if (f === 2) into.resourceType = r.uint();
        else r.skip();
        break;
      default:
        r.skip();
    }
  }
}
