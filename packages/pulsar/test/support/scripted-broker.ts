/**
 * A scripted stand-in for a Pulsar broker's binary protocol, NOT a broker: it
 * injects faults the lab's standalone cannot produce on demand (a consumer
 * closed in the same write that confirms its subscription). It answers
 * CONNECT, LOOKUP (connect here), PARTITIONED_METADATA (not partitioned) and
 * SUBSCRIBE; on FLOW it sends the messages it was given, one per permit; it
 * records what the client sent. Commands are built with the binding's own
 * protobuf writer; the field numbers are PulsarApi.proto's.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { crc32c } from '../../src/binary/crc32c.js';
import { CommandType, decodeCommand } from '../../src/binary/commands.js';
import { FrameReader } from '../../src/binary/frames.js';
import { ProtoReader, ProtoWriter } from '../../src/binary/proto.js';

export interface ScriptedBroker {
  readonly url: string;
  /** Each SUBSCRIBE's consumer id, in order. */
  readonly subscribes: number[];
  /** Each acknowledged entry, as `ledger:entry`. */
  readonly acks: string[];
  /** Called on each SUBSCRIBE (1-based): true to close that consumer in the same write as its SUCCESS. */
  closeOnSubscribe: (n: number) => boolean;
  stop(): Promise<void>;
}

function frame(command: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(4 + command.length, 0);
  head.writeUInt32BE(command.length, 4);
  return Buffer.concat([head, command]);
}

function base(type: number, build: (w: ProtoWriter) => void): Buffer {
  return new ProtoWriter().uint(1, type).message(type, build).finish();
}

/** A MESSAGE frame: the command, then 0x0e01, CRC-32C, metadata size, MessageMetadata, payload. */
function messageFrame(consumerId: number, entryId: number, body: Buffer): Buffer {
  const command = base(CommandType.MESSAGE, (w) => w.uint(1, consumerId).message(2, (id) => id.uint(1, 7).uint(2, entryId)));
  const metadata = new ProtoWriter().string(1, 'scripted').uint(2, entryId).uint(3, Date.now()).finish();
  const rest = Buffer.alloc(4 + metadata.length + body.length);
  rest.writeUInt32BE(metadata.length, 0);
  metadata.copy(rest, 4);
  body.copy(rest, 4 + metadata.length);
  const check = Buffer.alloc(6);
  check.writeUInt16BE(0x0e01, 0);
  check.writeUInt32BE(crc32c(rest), 2);
  const size = 4 + command.length + check.length + rest.length;
  const head = Buffer.alloc(8);
  head.writeUInt32BE(size, 0);
  head.writeUInt32BE(command.length, 4);
  return Buffer.concat([head, command, check, rest]);
}

/** A field of a command's sub-message, read raw (FLOW's permits, SUBSCRIBE's consumer id). */
function field(buf: Buffer, type: number, number: number): number | undefined {
  const outer = new ProtoReader(buf);
  while (outer.next()) {
    if (outer.field !== type) {
      outer.skip();
      continue;
    }
    const inner = outer.nested();
    while (inner.next()) {
      if (inner.field === number) return inner.uint();
      inner.skip();
    }
  }
  return undefined;
}

/** Starts the stand-in on 127.0.0.1; `bodies` are what it sends, in order, as permits allow. */
export async function scriptedBroker(bodies: readonly Buffer[]): Promise<ScriptedBroker> {
  const sockets = new Set<Socket>();
  const subscribes: number[] = [];
  const acks: string[] = [];
  let url = '';
  const broker: ScriptedBroker = {
    get url() {
      return url;
    },
    subscribes,
    acks,
    closeOnSubscribe: () => false,
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  let next = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const reader = new FrameReader();
    let consumerId = -1;
    socket.on('data', (chunk: Buffer) => reader.push(chunk, (f) => {
      const raw = f.buf.subarray(f.commandStart, f.commandEnd);
      const command = decodeCommand(f.buf, f.commandStart, f.commandEnd);
      const requestId = (type: number, number: number) => field(raw, type, number) ?? 0;
      switch (command.type) {
        case CommandType.CONNECT:
          socket.write(frame(base(CommandType.CONNECTED, (w) => w.string(1, 'scripted').uint(2, 21))));
          return;
        case CommandType.LOOKUP:
          socket.write(frame(base(CommandType.LOOKUP_RESPONSE, (w) => w.string(1, url).uint(3, 1).uint(4, requestId(CommandType.LOOKUP, 2)))));
          return;
        case CommandType.PARTITIONED_METADATA:
          socket.write(frame(base(CommandType.PARTITIONED_METADATA_RESPONSE, (w) => w.uint(1, 0).uint(2, requestId(CommandType.PARTITIONED_METADATA, 2)).uint(3, 0))));
          return;
        case CommandType.SUBSCRIBE: {
          consumerId = requestId(CommandType.SUBSCRIBE, 4);
          subscribes.push(consumerId);
          const success = frame(base(CommandType.SUCCESS, (w) => w.uint(1, requestId(CommandType.SUBSCRIBE, 5))));
          const close = broker.closeOnSubscribe(subscribes.length)
            ? frame(base(CommandType.CLOSE_CONSUMER, (w) => w.uint(1, consumerId).uint(2, 0)))
            : Buffer.alloc(0);
          socket.write(Buffer.concat([success, close]));
          return;
        }
        case CommandType.FLOW: {
          const permits = requestId(CommandType.FLOW, 2);
          for (let i = 0; i < permits && next < bodies.length; i++, next++) {
            socket.write(messageFrame(consumerId, next, bodies[next] as Buffer));
          }
          return;
        }
        case CommandType.ACK: {
          const outer = new ProtoReader(raw);
          while (outer.next()) {
            if (outer.field !== CommandType.ACK) {
              outer.skip();
              continue;
            }
            const ack = outer.nested();
            while (ack.next()) {
              if (ack.field !== 3) {
                ack.skip();
                continue;
              }
              const id = ack.nested();
              const parts: number[] = [];
              while (id.next()) parts[id.field] = id.uint();
              acks.push(`${parts[1]}:${parts[2]}`);
            }
          }
          return;
        }
        case CommandType.CLOSE_CONSUMER:
          socket.write(frame(base(CommandType.SUCCESS, (w) => w.uint(1, requestId(CommandType.CLOSE_CONSUMER, 2)))));
          return;
        default:
      }
    }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `pulsar://127.0.0.1:${(server.address() as { port: number }).port}`;
  return broker;
}
