// The binary protocol's wire layer without a broker: the protobuf codec, the
// BaseCommand encoders and decoder (field numbers from Pulsar's
// PulsarApi.proto), frame cutting with its CRC-32C check, and the reading of a
// stored entry (MessageMetadata, producer batches, compression). The expected
// bytes are computed by hand from the protobuf encoding rules, not by the code
// under test.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as zlib from 'node:zlib';
import * as cmd from '../src/binary/commands.js';
import { CommandType, decodeCommand } from '../src/binary/commands.js';
import { crc32c } from '../src/binary/crc32c.js';
import { readEntry, UnreadableEntryError } from '../src/binary/entry.js';
import { commandFrame, FrameError, FrameReader, type Frame } from '../src/binary/frames.js';
import { ProtoError, ProtoReader, ProtoWriter } from '../src/binary/proto.js';

/** Bytes from hex pairs, spaces ignored: `hex('08 96 01')`. */
function hex(text: string): Buffer {
  return Buffer.from(text.replace(/\s+/g, ''), 'hex');
}

/** A 32-bit big-endian size. */
function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

/** The varint of a signed 64-bit value, two's complement (what protobuf writes for a negative int32): an oracle independent of ProtoWriter. */
function signedVarint(value: bigint): Buffer {
  let v = BigInt.asUintN(64, value);
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
}

/** A field-by-field reading of a message, independent of ProtoReader: [field, number | bytes] in order. */
function fieldsOf(buf: Buffer): [number, number | Buffer][] {
  const out: [number, number | Buffer][] = [];
  let pos = 0;
  const varint = (): number => {
    let result = 0;
    let scale = 1;
    for (;;) {
      const byte = buf[pos++];
      if (byte === undefined) throw new Error('test oracle: truncated varint');
      result += (byte & 0x7f) * scale;
      if (byte < 0x80) return result;
      scale *= 128;
    }
  };
  while (pos < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) out.push([field, varint()]);
    else if (wire === 2) {
      const length = varint();
      out.push([field, buf.subarray(pos, pos + length)]);
      pos += length;
    } else throw new Error(`test oracle: wire type ${wire}`);
  }
  return out;
}

/** The one sub-command of an encoded BaseCommand: its type and its fields. */
function subCommand(buf: Buffer): { type: number; fields: [number, number | Buffer][] } {
  const [[typeField, type], [subField, sub], ...rest] = fieldsOf(buf) as [[number, number], [number, Buffer], ...unknown[]];
  assert.equal(typeField, 1, 'BaseCommand.type first');
  assert.equal(subField, type, 'the sub-command sits in the field numbered as its type');
  assert.equal(rest.length, 0, 'one sub-command');
  return { type, fields: fieldsOf(sub) };
}

describe('ProtoWriter / ProtoReader', () => {
  it('round-trips unsigned varints at the 7-bit and 32-bit edges and up to 2^53 - 1, with the exact bytes', () => {
    const cases: [number, string][] = [
      [0, '00'],
      [127, '7f'],
      [128, '80 01'],
      [300, 'ac 02'],
      [2 ** 32, '80 80 80 80 10'],
      [2 ** 53 - 1, 'ff ff ff ff ff ff ff 0f'],
    ];
    for (const [value, bytes] of cases) {
      const encoded = new ProtoWriter().uint(1, value).finish();
      assert.deepEqual(encoded, hex(`08 ${bytes}`), `the encoding of ${value}`);
      const r = new ProtoReader(encoded);
      assert.equal(r.next(), true);
      assert.equal(r.field, 1);
      assert.equal(r.uint(), value);
      assert.equal(r.next(), false, `nothing after ${value}`);
    }
  });

  it('writes a field number past 15 with a two-byte key and reads it back', () => {
    const encoded = new ProtoWriter().uint(68, 1).finish();
    assert.deepEqual(encoded, hex('a0 04 01'), '68 * 8 + 0 = 544 = a0 04');
    const r = new ProtoReader(encoded);
    assert.equal(r.next(), true);
    assert.equal(r.field, 68);
    assert.equal(r.uint(), 1);
  });

  it('round-trips bool, a non-ASCII string, bytes, an empty string and a nested message', () => {
    const text = 'héllo 你好 😀';
    const raw = Uint8Array.from([0, 255, 10, 13]);
    const encoded = new ProtoWriter()
      .bool(1, true)
      .bool(2, false)
      .string(3, text)
      .bytesField(4, raw)
      .message(5, (m) => m.uint(1, 300).string(2, 'inner').message(3, (deep) => deep.bool(1, true)))
      .string(6, '')
      .finish();
    // Spot-check the exact bytes of the bools and the string's length prefix (UTF-8 bytes, not characters).
    assert.deepEqual(encoded.subarray(0, 4), hex('08 01 10 00'));
    assert.deepEqual(encoded.subarray(4, 6), Buffer.from([0x1a, Buffer.byteLength(text)]));
    assert.deepEqual(encoded.subarray(-2), hex('32 00'), 'an empty string is a zero length');

    const r = new ProtoReader(encoded);
    const seen: unknown[] = [];
    while (r.next()) {
      switch (r.field) {
        case 1:
        case 2:
          seen.push(r.bool());
          break;
        case 3:
          seen.push(r.string());
          break;
        case 4:
          seen.push(Buffer.from(r.bytes()));
          break;
        case 5: {
          const inner = r.nested();
          const got: unknown[] = [];
          while (inner.next()) {
            if (inner.field === 1) got.push(inner.uint());
            else if (inner.field === 2) got.push(inner.string());
            else {
              const deep = inner.nested();
              assert.equal(deep.next(), true);
              got.push(deep.bool());
              assert.equal(deep.next(), false);
            }
          }
          seen.push(got);
          break;
        }
        case 6:
          seen.push(r.string());
          break;
        default:
          assert.fail(`unexpected field ${r.field}`);
      }
    }
    assert.deepEqual(seen, [true, false, text, Buffer.from(raw), [300, 'inner', true], '']);
  });

  it('writes nothing for an empty message, and refuses a negative or NaN uint (a default -1 is left out instead)', () => {
    assert.equal(new ProtoWriter().finish().length, 0);
    assert.equal(new ProtoReader(new ProtoWriter().finish()).next(), false);
    assert.throws(() => new ProtoWriter().uint(1, -1), RangeError);
    assert.throws(() => new ProtoWriter().uint(1, Number.NaN), RangeError);
  });

  it('int32 reads a negative value sign-extended to ten bytes (-1 is ff ff ff ff ff ff ff ff ff 01)', () => {
    const read = (bytes: Buffer): number => {
      const r = new ProtoReader(Buffer.concat([hex('08'), bytes]));
      assert.equal(r.next(), true);
      return r.int32();
    };
    assert.equal(read(hex('ff ff ff ff ff ff ff ff ff 01')), -1);
    assert.equal(read(hex('fe ff ff ff ff ff ff ff ff 01')), -2);
    assert.deepEqual(signedVarint(-1n), hex('ff ff ff ff ff ff ff ff ff 01'), 'the oracle agrees with the hand-written -1');
    for (const value of [-2147483648, -300, -129, -128, 0, 1, 127, 128, 300, 2147483647]) {
      assert.equal(read(signedVarint(BigInt(value))), value, `int32 ${value}`);
    }
    // A positive int32 is a plain varint: ff ff ff ff 07 is 2^31 - 1.
    assert.equal(read(hex('ff ff ff ff 07')), 2147483647);
  });

  it('skips unknown fields of each wire type: varint (0), fixed64 (1), length-delimited (2), fixed32 (5)', () => {
    const message = hex(
      '08 96 01' // field 1, varint 150
      + '11 01 02 03 04 05 06 07 08' // field 2, fixed64
      + '1a 03 61 62 63' // field 3, "abc"
      + '25 01 02 03 04' // field 4, fixed32
      + '2a 03 65 6e 64', // field 5, "end"
    );
    const r = new ProtoReader(message);
    const fields: number[] = [];
    let last: string | undefined;
    while (r.next()) {
      fields.push(r.field);
      if (r.field === 5) last = r.string();
      else r.skip();
    }
    assert.deepEqual(fields, [1, 2, 3, 4, 5]);
    assert.equal(last, 'end');
  });

  it('refuses to skip a group (wire types 3 and 4): a ProtoError, not a silent misread', () => {
    for (const key of ['0b', '0c']) {
      const r = new ProtoReader(hex(`${key} 00`));
      assert.equal(r.next(), true);
      assert.throws(() => r.skip(), ProtoError, `wire type of key ${key}`);
    }
  });

  it('refuses a value read with the wrong wire type', () => {
    const varintField = new ProtoReader(hex('08 01'));
    varintField.next();
    assert.throws(() => varintField.bytes(), ProtoError);
    const lengthField = new ProtoReader(hex('0a 01 61'));
    lengthField.next();
    assert.throws(() => lengthField.uint(), ProtoError);
    assert.throws(() => lengthField.int32(), ProtoError);
  });

  it('throws a ProtoError on truncated input of every kind', () => {
    const cases: [string, string, (r: ProtoReader) => unknown][] = [
      ['a key cut mid-varint', '80', (r) => r.next()],
      ['a key without its value', '08', (r) => (r.next(), r.uint())],
      ['a varint cut', '08 80 80', (r) => (r.next(), r.uint())],
      ['an int32 cut', '08 ff ff', (r) => (r.next(), r.int32())],
      ['a length running past the end', '0a 05 61 62', (r) => (r.next(), r.bytes())],
      ['a string running past the end', '0a 05 61 62', (r) => (r.next(), r.string())],
      ['a nested message running past the end', '0a 05 08 01', (r) => (r.next(), r.nested())],
      ['a length-delimited field skipped past the end', '0a 05 61', (r) => (r.next(), r.skip())],
      ['a fixed64 cut', '11 00 00 00', (r) => (r.next(), r.skip())],
      ['a fixed32 cut', '25 00 00', (r) => (r.next(), r.skip())],
    ];
    for (const [what, bytes, read] of cases) {
      assert.throws(() => read(new ProtoReader(hex(bytes))), ProtoError, what);
    }
  });

  it('reads only inside its window [start, end): a value running past end throws though the buffer goes on', () => {
    const buf = hex('ff 08 80 01 ff');
    assert.throws(() => {
      const r = new ProtoReader(buf, 1, 3);
      r.next();
      r.uint();
    }, ProtoError);
    const whole = new ProtoReader(buf, 1, 4);
    assert.equal(whole.next(), true);
    assert.equal(whole.uint(), 128);
    assert.equal(whole.next(), false, 'stops at end, not at the buffer\'s end');
  });

  it('refuses a varint longer than ten bytes', () => {
    const eleven = hex('08 ff ff ff ff ff ff ff ff ff ff 01');
    const asUint = new ProtoReader(eleven);
    asUint.next();
    assert.throws(() => asUint.uint(), /longer than ten bytes/);
    const asInt32 = new ProtoReader(eleven);
    asInt32.next();
    assert.throws(() => asInt32.int32(), /longer than ten bytes/);
    const asSkip = new ProtoReader(eleven);
    asSkip.next();
    assert.throws(() => asSkip.skip(), ProtoError);
  });
});

describe('commands: encoders', () => {
  it('FLOW: exact bytes', () => {
    // type 11 (08 0b); field 11 length-delimited (5a), 5 bytes: consumer_id 7, messagePermits 1000 (e8 07).
    assert.deepEqual(cmd.flow(7, 1000), hex('08 0b 5a 05 08 07 10 e8 07'));
  });

  it('ACK: exact bytes, two message ids, one with a partition', () => {
    const ids = [
      { ledgerId: 10, entryId: 20, partition: -1, batchIndex: -1 },
      { ledgerId: 300, entryId: 0, partition: 2, batchIndex: -1 },
    ];
    // type 10 (08 0a); field 10 (52), 19 bytes: consumer_id 3, ack_type Individual (10 00),
    // message_id {ledgerId 10, entryId 20}, message_id {ledgerId 300 (ac 02), entryId 0, partition 2}.
    assert.deepEqual(cmd.ack(3, ids), hex('08 0a 52 13 08 03 10 00 1a 04 08 0a 10 14 1a 07 08 ac 02 10 00 18 02'));
  });

  it('REDELIVER_UNACKNOWLEDGED_MESSAGES, CLOSE_CONSUMER, PING, PONG, LOOKUP, PARTITIONED_METADATA: exact bytes', () => {
    // Field numbers past 15 take two-byte keys: 20 -> a2 01, 16 -> 82 01, 18 -> 92 01, 19 -> 9a 01, 23 -> ba 01, 21 -> aa 01.
    assert.deepEqual(cmd.redeliver(5, [{ ledgerId: 1, entryId: 2, partition: -1, batchIndex: -1 }]), hex('08 14 a2 01 08 08 05 12 04 08 01 10 02'));
    assert.deepEqual(cmd.closeConsumer(5, 9), hex('08 10 82 01 04 08 05 10 09'));
    assert.deepEqual(cmd.ping(), hex('08 12 92 01 00'));
    assert.deepEqual(cmd.pong(), hex('08 13 9a 01 00'));
    assert.deepEqual(cmd.lookup('t', 1, true), hex('08 17 ba 01 07 0a 01 74 10 01 18 01'));
    assert.deepEqual(cmd.lookup('t', 1, false), hex('08 17 ba 01 07 0a 01 74 10 01 18 00'));
    assert.deepEqual(cmd.partitionedMetadata('t', 2), hex('08 15 aa 01 05 0a 01 74 10 02'));
  });

  it('encodeMessageId: ledger, entry, then partition and batch index only when >= 0', () => {
    assert.deepEqual(cmd.encodeMessageId({ ledgerId: 1, entryId: 2, partition: 3, batchIndex: 4 }), hex('08 01 10 02 18 03 20 04'));
    assert.deepEqual(cmd.encodeMessageId({ ledgerId: 1, entryId: 2, partition: -1, batchIndex: -1 }), hex('08 01 10 02'));
    assert.deepEqual(cmd.encodeMessageId({ ledgerId: 0, entryId: 0, partition: 0, batchIndex: 0 }), hex('08 00 10 00 18 00 20 00'));
  });

  it('CONNECT: client_version 1, protocol_version 4 (21); with a token auth_method_name 5 and auth_data 3; proxy_to_broker_url 6', () => {
    assert.deepEqual(cmd.connect({ clientVersion: 'c' }), hex('08 02 12 05 0a 01 63 20 15'));
    const { type, fields } = subCommand(cmd.connect({ clientVersion: 'babelqueue', authMethod: 'token', authData: 'jwt', proxyToBrokerUrl: 'pulsar://b:6650' }));
    assert.equal(type, CommandType.CONNECT);
    assert.deepEqual(fields, [
      [1, Buffer.from('babelqueue')],
      [4, 21],
      [5, Buffer.from('token')],
      [3, Buffer.from('jwt')],
      [6, Buffer.from('pulsar://b:6650')],
    ]);
    const defaulted = subCommand(cmd.connect({ clientVersion: 'c', authData: 'jwt' }));
    assert.deepEqual(defaulted.fields.find(([f]) => f === 5), [5, Buffer.from('token')], 'auth method defaults to token');
  });

  it('SUBSCRIBE: topic 1, subscription 2, subType 3, consumer_id 4, request_id 5, consumer_name 6, initialPosition 13', () => {
    const base = { topic: 'persistent://public/default/q', subscription: 'babelqueue', consumerId: 4, requestId: 9, consumerName: 'n' };
    for (const [subType, code] of [['Exclusive', 0], ['Shared', 1], ['Failover', 2], ['Key_Shared', 3]] as const) {
      for (const [earliest, position] of [[true, 1], [false, 0]] as const) {
        const { type, fields } = subCommand(cmd.subscribe({ ...base, subType, earliest }));
        assert.equal(type, CommandType.SUBSCRIBE);
        assert.deepEqual(fields, [
          [1, Buffer.from(base.topic)],
          [2, Buffer.from('babelqueue')],
          [3, code],
          [4, 4],
          [5, 9],
          [6, Buffer.from('n')],
          [13, position],
        ], `${subType}, earliest ${earliest}`);
      }
    }
  });

  it('AUTH_RESPONSE: client_version 1, response 2 (AuthData: auth_method_name 1, auth_data 2), protocol_version 3', () => {
    const { type, fields } = subCommand(cmd.authResponse('c', 'token', 'jwt'));
    assert.equal(type, CommandType.AUTH_RESPONSE);
    assert.deepEqual(fields, [[1, Buffer.from('c')], [2, hex('0a 05 74 6f 6b 65 6e 12 03 6a 77 74')], [3, 21]]);
  });
});

describe('commands: decodeCommand', () => {
  /** Decodes `command` placed inside a larger buffer, so start and end are honoured. */
  function decode(command: Buffer) {
    const padded = Buffer.concat([hex('ff ff ff'), command, hex('ff ff')]);
    return decodeCommand(padded, 3, 3 + command.length);
  }

  it('MESSAGE: consumer id, message id with partition and batch index, redelivery count; ack_set and epoch skipped', () => {
    const sub = '08 2a' // consumer_id 42
      + '12 09 08 d2 09 10 07 18 03 20 02' // message_id {ledgerId 1234, entryId 7, partition 3, batch_index 2}
      + '18 04' // redelivery_count 4
      + '20 ff 01' // ack_set (int64), unknown here
      + '28 01'; // consumer_epoch, unknown here
    const command = decode(hex(`08 09 4a 14 ${sub}`));
    assert.deepEqual(command, {
      type: CommandType.MESSAGE,
      consumerId: 42,
      messageId: { ledgerId: 1234, entryId: 7, partition: 3, batchIndex: 2 },
      redeliveryCount: 4,
    });
  });

  it('MESSAGE: a partition and batch index of -1 sent as ten-byte varints read as -1', () => {
    const id = '08 01 10 02 18 ff ff ff ff ff ff ff ff ff 01 20 ff ff ff ff ff ff ff ff ff 01';
    const command = decode(hex(`08 09 4a 1e 08 01 12 1a ${id}`));
    assert.deepEqual(command, { type: CommandType.MESSAGE, consumerId: 1, messageId: { ledgerId: 1, entryId: 2, partition: -1, batchIndex: -1 } });
  });

  it('MESSAGE: a message id without partition or batch index reads them as -1; a large ledger id survives', () => {
    const ledgerId = 2 ** 40 + 5;
    const bytes = new ProtoWriter().uint(1, CommandType.MESSAGE).message(9, (m) => m.uint(1, 1).message(2, (id) => id.uint(1, ledgerId).uint(2, 0))).finish();
    assert.deepEqual(decode(bytes).messageId, { ledgerId, entryId: 0, partition: -1, batchIndex: -1 });
  });

  it('CONNECTED: server version and max message size; protocol version and feature flags skipped', () => {
    const bytes = new ProtoWriter()
      .uint(1, CommandType.CONNECTED)
      .message(3, (m) => m.string(1, 'Pulsar Server4.0.0').uint(2, 21).uint(3, 5 * 1024 * 1024).message(4, (flags) => flags.bool(1, true)))
      .finish();
    // max_message_size 5242880 is 80 80 c0 02.
    assert.ok(bytes.includes(hex('18 80 80 c0 02')), 'the hand-computed varint of 5 MiB is in the bytes');
    assert.deepEqual(decode(bytes), { type: CommandType.CONNECTED, serverVersion: 'Pulsar Server4.0.0', maxMessageSize: 5242880 });
  });

  it('ERROR: request id, the ServerError name by code, the message', () => {
    const error = (code: number) => decode(new ProtoWriter().uint(1, CommandType.ERROR).message(14, (m) => m.uint(1, 7).uint(2, code).string(3, 'nope')).finish());
    assert.deepEqual(error(11), { type: CommandType.ERROR, requestId: 7, error: 'TopicNotFound', message: 'nope' });
    assert.equal(error(0).error, 'UnknownError');
    assert.equal(error(3).error, 'AuthenticationError');
    assert.equal(error(4).error, 'AuthorizationError');
    assert.equal(error(5).error, 'ConsumerBusy');
    assert.equal(error(12).error, 'SubscriptionNotFound');
    assert.equal(error(14).error, 'TooManyRequests');
    assert.equal(error(25).error, 'ProducerFenced');
    assert.equal(error(99).error, 'ServerError 99', 'an unknown code is named by its number');
  });

  it('SUCCESS: request id', () => {
    assert.deepEqual(decode(hex('08 0d 6a 02 08 05')), { type: CommandType.SUCCESS, requestId: 5 });
  });

  it('LOOKUP_RESPONSE: every field', () => {
    const bytes = new ProtoWriter()
      .uint(1, CommandType.LOOKUP_RESPONSE)
      .message(24, (m) => m
        .string(1, 'pulsar://broker-1:6650')
        .string(2, 'pulsar+ssl://broker-1:6651')
        .uint(3, 1)
        .uint(4, 8)
        .bool(5, true)
        .uint(6, 6)
        .string(7, 'not ready')
        .bool(8, true)
        .string(9, 'unknown field'))
      .finish();
    assert.deepEqual(decode(bytes), {
      type: CommandType.LOOKUP_RESPONSE,
      brokerServiceUrl: 'pulsar://broker-1:6650',
      brokerServiceUrlTls: 'pulsar+ssl://broker-1:6651',
      lookup: 1,
      requestId: 8,
      authoritative: true,
      error: 'ServiceNotReady',
      message: 'not ready',
      proxyThroughServiceUrl: true,
    });
    const failed = new ProtoWriter().uint(1, CommandType.LOOKUP_RESPONSE).message(24, (m) => m.uint(3, 2).uint(4, 9).bool(5, false).bool(8, false)).finish();
    assert.deepEqual(decode(failed), { type: CommandType.LOOKUP_RESPONSE, lookup: 2, requestId: 9, authoritative: false, proxyThroughServiceUrl: false });
  });

  it('PARTITIONED_METADATA_RESPONSE: partitions, request id, response; a failed one with its error', () => {
    const ok = new ProtoWriter().uint(1, CommandType.PARTITIONED_METADATA_RESPONSE).message(22, (m) => m.uint(1, 4).uint(2, 3).uint(3, 0)).finish();
    assert.deepEqual(ok, hex('08 16 b2 01 06 08 04 10 03 18 00'), '22 * 8 + 2 = 178 = b2 01');
    assert.deepEqual(decode(ok), { type: CommandType.PARTITIONED_METADATA_RESPONSE, partitions: 4, requestId: 3, response: 0 });
    const failed = new ProtoWriter().uint(1, CommandType.PARTITIONED_METADATA_RESPONSE).message(22, (m) => m.uint(2, 3).uint(3, 1).uint(4, 4).string(5, 'denied')).finish();
    assert.deepEqual(decode(failed), { type: CommandType.PARTITIONED_METADATA_RESPONSE, requestId: 3, response: 1, error: 'AuthorizationError', message: 'denied' });
  });

  it('CLOSE_CONSUMER: consumer id; request id and assigned broker URL skipped', () => {
    const bytes = new ProtoWriter().uint(1, CommandType.CLOSE_CONSUMER).message(16, (m) => m.uint(1, 5).uint(2, 1).string(3, 'pulsar://elsewhere:6650')).finish();
    assert.deepEqual(decode(bytes), { type: CommandType.CLOSE_CONSUMER, consumerId: 5 });
  });

  it('REACHED_END_OF_TOPIC, ACTIVE_CONSUMER_CHANGE: consumer id; TOPIC_MIGRATED: resource id and type', () => {
    assert.deepEqual(decode(new ProtoWriter().uint(1, 27).message(27, (m) => m.uint(1, 6)).finish()), { type: CommandType.REACHED_END_OF_TOPIC, consumerId: 6 });
    assert.deepEqual(decode(new ProtoWriter().uint(1, 31).message(31, (m) => m.uint(1, 6).bool(2, true)).finish()), { type: CommandType.ACTIVE_CONSUMER_CHANGE, consumerId: 6 });
    const migrated = new ProtoWriter().uint(1, 68).message(68, (m) => m.uint(1, 6).uint(2, 1).string(3, 'pulsar://new:6650').string(4, 'pulsar+ssl://new:6651')).finish();
    assert.deepEqual(decode(migrated), { type: CommandType.TOPIC_MIGRATED, consumerId: 6, resourceType: 1 });
  });

  it('skips unknown fields: an unknown sub-command, unknown fields of every wire type inside a known one, an unknown type', () => {
    // PING with an unknown sub-command (field 99) beside its own empty one.
    const ping = Buffer.concat([hex('08 12 92 01 00'), new ProtoWriter().message(99, (m) => m.uint(1, 1).string(2, 'x')).finish()]);
    assert.deepEqual(decode(ping), { type: CommandType.PING });
    // SUCCESS with fixed64, fixed32, varint and length-delimited unknowns around request_id.
    const inner = hex('11 01 02 03 04 05 06 07 08 25 01 02 03 04 08 05 10 96 01 1a 02 61 62');
    assert.deepEqual(decode(Buffer.concat([hex('08 0d 6a'), Buffer.from([inner.length]), inner])), { type: CommandType.SUCCESS, requestId: 5 });
    // A type this binding does not know: its type, nothing else.
    assert.deepEqual(decode(new ProtoWriter().uint(1, 200).message(200, (m) => m.uint(1, 1)).finish()), { type: 200 });
  });

  it('throws a ProtoError for a command cut short', () => {
    const whole = hex('08 09 4a 14 08 2a 12 09 08 d2 09 10 07 18 03 20 02 18 04 20 ff 01 28 01');
    assert.throws(() => decodeCommand(whole, 0, whole.length - 3), ProtoError);
  });
});

// ---- frames ----

interface FrameParts {
  command: Buffer;
  metadata?: Buffer;
  payload?: Buffer;
  checksum?: boolean;
  brokerEntry?: Buffer;
}

/** A frame as a broker writes it: [total][command size][command] then, for a message, [0e02 block][0e01 crc][metadata size][metadata][payload]. */
function frameBytes(parts: FrameParts): Buffer {
  const pieces = [u32(parts.command.length), parts.command];
  if (parts.metadata !== undefined) {
    if (parts.brokerEntry !== undefined) pieces.push(hex('0e 02'), u32(parts.brokerEntry.length), parts.brokerEntry);
    const rest = Buffer.concat([u32(parts.metadata.length), parts.metadata, parts.payload ?? Buffer.alloc(0)]);
    if (parts.checksum !== false) pieces.push(hex('0e 01'), u32(crc32c(rest)));
    pieces.push(rest);
  }
  const body = Buffer.concat(pieces);
  return Buffer.concat([u32(body.length), body]);
}

/** A frame reduced to comparable values. */
function plain(frame: Frame) {
  return {
    command: frame.buf.subarray(frame.commandStart, frame.commandEnd).toString('hex'),
    ...(frame.payload === undefined
      ? {}
      : { metadata: frame.payload.metadata.toString('hex'), data: frame.payload.data.toString('hex'), checksumOk: frame.payload.checksumOk }),
  };
}

function readAll(chunks: Buffer[]): ReturnType<typeof plain>[] {
  const reader = new FrameReader();
  const frames: ReturnType<typeof plain>[] = [];
  for (const chunk of chunks) reader.push(chunk, (frame) => frames.push(plain(frame)));
  return frames;
}

describe('frames: FrameReader', () => {
  const messageCommand = hex('08 09 4a 0d 08 01 12 09 08 d2 09 10 07 18 03 20 02');
  const first = { command: cmd.pong() };
  const second = { command: messageCommand, metadata: hex('0a 01 70 10 00 18 7b'), payload: Buffer.from('first payload ü') };
  const third = { command: messageCommand, metadata: hex('0a 01 70 10 01 18 7c'), payload: Buffer.from('second payload'), brokerEntry: hex('08 e8 07 10 05') };
  const stream = Buffer.concat([frameBytes(first), frameBytes(second), frameBytes(third)]);
  const expected = [
    { command: first.command.toString('hex') },
    { command: messageCommand.toString('hex'), metadata: second.metadata.toString('hex'), data: second.payload.toString('hex'), checksumOk: true },
    { command: messageCommand.toString('hex'), metadata: third.metadata.toString('hex'), data: third.payload.toString('hex'), checksumOk: true },
  ];

  it('commandFrame writes [total][command size][command]', () => {
    assert.deepEqual(commandFrame(cmd.ping()), hex('00 00 00 09 00 00 00 05 08 12 92 01 00'));
    assert.deepEqual(frameBytes(first), commandFrame(first.command), 'the test\'s builder agrees');
  });

  it('yields the same three frames (a command, a message with 0x0e01, one with a 0x0e02 block first) however the stream is cut in two', () => {
    assert.deepEqual(readAll([stream]), expected, 'in one chunk');
    for (let cut = 0; cut <= stream.length; cut++) {
      assert.deepEqual(readAll([stream.subarray(0, cut), stream.subarray(cut)]), expected, `cut at byte ${cut}`);
    }
  });

  it('yields the same frames fed a byte at a time, and across three chunks', () => {
    assert.deepEqual(readAll([...stream].map((byte) => Buffer.from([byte]))), expected);
    const step = 7;
    for (let a = 0; a <= stream.length; a += step) {
      for (let b = a; b <= stream.length; b += step) {
        assert.deepEqual(readAll([stream.subarray(0, a), stream.subarray(a, b), stream.subarray(b)]), expected, `cuts at ${a} and ${b}`);
      }
    }
  });

  it('reports checksumOk false for a corrupted payload or metadata byte, or a wrong checksum', () => {
    const good = frameBytes(second);
    for (const offsetFromEnd of [1, second.payload.length, second.payload.length + 1]) {
      const bad = Buffer.from(good);
      bad[bad.length - offsetFromEnd]! ^= 0x01;
      const [frame] = readAll([bad]);
      assert.equal(frame?.checksumOk, false, `byte ${offsetFromEnd} from the end flipped`);
    }
    const badCrc = Buffer.from(good);
    const crcAt = 4 + 4 + messageCommand.length + 2;
    badCrc[crcAt]! ^= 0xff;
    assert.equal(readAll([badCrc])[0]?.checksumOk, false, 'the checksum itself wrong');
    const withBlock = Buffer.from(frameBytes(third));
    withBlock[withBlock.length - 1]! ^= 0x80;
    assert.equal(readAll([withBlock])[0]?.checksumOk, false, 'after a broker-entry block');
  });

  it('reads a message without a checksum (checksumOk true: nothing to check)', () => {
    const [frame] = readAll([frameBytes({ ...second, checksum: false })]);
    assert.deepEqual(frame, expected[1]);
  });

  it('throws a FrameError for a frame size of 3 or over 64 MiB, as soon as the size arrives', () => {
    assert.throws(() => readAll([hex('00 00 00 03 00 00 00')]), FrameError);
    assert.throws(() => readAll([u32(64 * 1024 * 1024 + 1)]), FrameError);
    assert.throws(() => readAll([u32(0xffffffff)]), FrameError);
    assert.throws(() => readAll([hex('00 00'), hex('00 02')]), FrameError, 'the size split across chunks');
    // Exactly 64 MiB and exactly 4 bytes are allowed (the frame waits for its bytes; an empty command).
    assert.deepEqual(readAll([u32(64 * 1024 * 1024)]), []);
    assert.deepEqual(readAll([hex('00 00 00 04 00 00 00 00')]), [{ command: '' }]);
  });

  it('throws a FrameError for a command size running past its frame, a message without metadata, metadata past the frame', () => {
    assert.throws(() => readAll([hex('00 00 00 06 00 00 00 05 08 12')]), /command runs past the end of its frame/);
    const command = cmd.pong();
    const body = (rest: Buffer) => {
      const inner = Buffer.concat([u32(command.length), command, rest]);
      return Buffer.concat([u32(inner.length), inner]);
    };
    assert.throws(() => readAll([body(hex('0e 01 00 00 00 00 00'))]), /a message frame without its metadata/);
    assert.throws(() => readAll([body(hex('00 00 00 09 0a 01'))]), /message metadata runs past the end of its frame/);
    assert.throws(() => readAll([body(hex('0e 02 00 00 00 20 01 02'))]), FrameError, 'a broker-entry block running past the frame');
  });

  it('hands over views into the bytes read, no copies', () => {
    const frames: Frame[] = [];
    const whole = frameBytes(second);
    new FrameReader().push(whole, (frame) => frames.push(frame));
    assert.equal(frames[0]?.buf, whole);
    assert.equal(frames[0]?.payload?.data.buffer, whole.buffer);
  });
});

// ---- entries ----

const PUBLISH_TIME = 1_700_000_000_123;

/** MessageMetadata: the required producer_name 1, sequence_id 2, publish_time 3, then what `build` adds. */
function metadata(build: (w: ProtoWriter) => void = () => undefined): Buffer {
  const w = new ProtoWriter().string(1, 'producer-1').uint(2, 17).uint(3, PUBLISH_TIME);
  build(w);
  return w.finish();
}

function properties(w: ProtoWriter, field: number, props: Record<string, string>): void {
  for (const [key, value] of Object.entries(props)) w.message(field, (kv) => kv.string(1, key).string(2, value));
}

/** One message of a batch payload: [u32 size][SingleMessageMetadata (properties 1, payload_size 3)][payload]. */
function single(props: Record<string, string>, payload: Buffer, payloadSize = payload.length): Buffer {
  const w = new ProtoWriter();
  properties(w, 1, props);
  w.uint(3, payloadSize);
  const smm = w.finish();
  return Buffer.concat([u32(smm.length), smm, payload]);
}

describe('entry: readEntry', () => {
  const batch: { properties: Record<string, string>; body: Buffer }[] = [
    { properties: { i: '0', note: 'héllo ✓' }, body: Buffer.from('{"first":1}') },
    { properties: { i: '1' }, body: Buffer.from([0x00, 0xff, 0x0e, 0x01]) },
    { properties: {}, body: Buffer.alloc(0) },
  ];
  const batchPayload = Buffer.concat(batch.map((m) => single(m.properties, m.body)));
  const expectedBatch = batch.map((m) => ({ body: m.body, properties: m.properties, publishTime: PUBLISH_TIME }));

  it('a non-batched entry: the payload as its one message, with the properties and publish time', () => {
    const meta = metadata((w) => {
      properties(w, 4, { 'bq-job': 'urn:babel:orders:created', ünï: 'cödé' });
      w.string(6, 'partition key (unknown here)').uint(12, 1_699_999_999_000);
    });
    const entry = readEntry(meta, Buffer.from('hello'));
    assert.deepEqual(entry, {
      batched: false,
      messages: [{ body: Buffer.from('hello'), properties: { 'bq-job': 'urn:babel:orders:created', ünï: 'cödé' }, publishTime: PUBLISH_TIME }],
    });
  });

  it('a batch of three: per-message properties, an empty payload, the entry\'s publish time; entry properties not inherited', () => {
    const entry = readEntry(metadata((w) => {
      properties(w, 4, { entryLevel: 'x' });
      w.uint(11, 3);
    }), batchPayload);
    assert.deepEqual(entry, { batched: true, messages: expectedBatch });
  });

  it('a batch of one (num_messages_in_batch present) is a batch, as Pulsar\'s clients read it', () => {
    const entry = readEntry(metadata((w) => w.uint(11, 1)), single({ k: 'v' }, Buffer.from('only')));
    assert.deepEqual(entry, { batched: true, messages: [{ body: Buffer.from('only'), properties: { k: 'v' }, publishTime: PUBLISH_TIME }] });
  });

  it('ZLIB (2): a compressed single message and a compressed batch, with uncompressed_size', () => {
    const body = Buffer.from(JSON.stringify({ data: 'z'.repeat(500) }));
    const single1 = readEntry(metadata((w) => w.uint(8, 2).uint(9, body.length)), zlib.deflateSync(body));
    assert.deepEqual(single1.messages.map((m) => m.body), [body]);
    const batched = readEntry(metadata((w) => w.uint(8, 2).uint(9, batchPayload.length).uint(11, 3)), zlib.deflateSync(batchPayload));
    assert.deepEqual(batched, { batched: true, messages: expectedBatch });
  });

  it('refuses a compressed payload whose size differs from uncompressed_size', () => {
    const body = Buffer.from('some body text');
    assert.throws(() => readEntry(metadata((w) => w.uint(8, 2).uint(9, body.length + 1)), zlib.deflateSync(body)), UnreadableEntryError);
  });

  it('refuses a batch whose payload_size runs past the end', () => {
    const cut = Buffer.concat([single({ i: '0' }, Buffer.from('ok')), single({ i: '1' }, Buffer.from('short'), 50)]);
    assert.throws(() => readEntry(metadata((w) => w.uint(11, 2)), cut), (error: unknown) => {
      assert.ok(error instanceof UnreadableEntryError, 'an UnreadableEntryError');
      assert.match(error.message, /batch that does not decode.*message 1 of 2.*payload runs past/);
      return true;
    });
  });

  it('refuses a batch with fewer messages than num_messages_in_batch, or a message metadata running past it', () => {
    assert.throws(() => readEntry(metadata((w) => w.uint(11, 4)), batchPayload), /message 3 of 4 is missing/);
    const metaPast = Buffer.concat([u32(100), hex('18 00')]);
    assert.throws(() => readEntry(metadata((w) => w.uint(11, 1)), metaPast), /its metadata runs past the batch/);
    const noSize = Buffer.concat([u32(2), hex('0a 00'), Buffer.from('x')]);
    assert.throws(() => readEntry(metadata((w) => w.uint(11, 1)), noSize), UnreadableEntryError, 'no payload_size');
  });

  it('refuses an encrypted entry (encryption_keys present)', () => {
    const meta = metadata((w) => w.message(13, (k) => k.string(1, 'key-name').bytesField(2, Buffer.from([1, 2, 3]))));
    assert.throws(() => readEntry(meta, Buffer.from('ciphertext')), (error: unknown) => {
      assert.ok(error instanceof UnreadableEntryError, 'an UnreadableEntryError');
      assert.match(error.message, /encrypted/);
      return true;
    });
  });

  it('refuses a chunk of a chunked message (num_chunks_from_msg 27 > 1), reads num_chunks_from_msg 1', () => {
    assert.throws(() => readEntry(metadata((w) => w.string(26, 'uuid').uint(27, 3).uint(28, 10).uint(29, 0)), Buffer.from('part')), /chunked/);
    assert.equal(readEntry(metadata((w) => w.uint(27, 1)), Buffer.from('whole')).messages[0]?.body.toString(), 'whole');
  });

  it('refuses uncompressed_size over 64 MiB before decoding anything', () => {
    const meta = metadata((w) => w.uint(8, 1).uint(9, 64 * 1024 * 1024 + 1));
    assert.throws(() => readEntry(meta, Buffer.from([0x00])), (error: unknown) => {
      assert.ok(error instanceof UnreadableEntryError, 'an UnreadableEntryError');
      assert.match(error.message, /claims 67108865 bytes uncompressed/);
      return true;
    });
  });

  it('refuses an unknown compression code (9)', () => {
    assert.throws(() => readEntry(metadata((w) => w.uint(8, 9).uint(9, 1)), Buffer.from('x')), (error: unknown) => {
      assert.ok(error instanceof UnreadableEntryError, 'an UnreadableEntryError');
      assert.match(error.message, /unknown Pulsar compression type 9/);
      return true;
    });
  });

  it('refuses metadata that does not decode', () => {
    assert.throws(() => readEntry(hex('0a 09 61'), Buffer.from('x')), (error: unknown) => {
      assert.ok(error instanceof UnreadableEntryError, 'an UnreadableEntryError');
      assert.match(error.message, /message metadata that does not decode/);
      return true;
    });
  });
});
