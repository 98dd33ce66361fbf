// The AMQP 1.0 side of the stand-in, on rhea's container: SASL, links to
// queues (client senders enqueue, client receivers get PeekLock or
// ReceiveAndDelete deliveries with lock tokens as delivery tags), the settle
// outcomes, and the request/response nodes of management.ts.
import type { AddressInfo, Server, Socket } from 'node:net';
import rhea from 'rhea';
import type { Entity } from './entity.js';
import { LockLostError, NotAllowedError } from './entity.js';
import { answer, responseMessage } from './management.js';
import { Namespace, NotModelledError } from './namespace.js';
import { BATCH_FORMAT, lockTokenTag, messageCodec, types, unbatch, type Entries } from './wire.js';

/** Service Bus Standard tier's largest message, announced on every sender link. */
export const MAX_MESSAGE_BYTES = 262_144;

export interface StandInOptions {
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly log?: (line: string) => void;
}

export interface StandIn {
  readonly port: number;
  readonly namespace: Namespace;
  /**
   * Test-only fault: destroys every client socket at once, as a network cut
   * would (no AMQP close, no detach). Locks held on those connections lapse
   * at lock expiry, as on Service Bus. Returns how many sockets were cut.
   */
  dropConnections(): number;
  close(): Promise<void>;
}

const RAW = Symbol('raw message bytes');
/** The session filter of a session receiver's source (`com.microsoft:session-filter`). */
const SESSION_FILTER = 'com.microsoft:session-filter';
/** The link property a session receiver reads its session lock's expiry from (.NET ticks). */
const SESSION_LOCKED_UNTIL = 'com.microsoft:locked-until-utc';
/** How long an accept-next-session waits for a session when the client names no time-out; the service caps it near this too. */
const ACCEPT_WAIT_MS = 60_000;
const ACCEPT_WAIT_MAX_MS = 65_000;

/** Destroying a socket with an error is what makes rhea end its connection (and its heartbeat timers); a plain destroy() leaves them running. */
const DROPPED = new Error('connection dropped by the stand-in');

/** What the stand-in knows about one of its sending links (a client's receiver). */
interface Outgoing {
  readonly entity: Entity;
  readonly peekLock: boolean;
  /** The session a session receiver accepted (it receives that session's messages only). */
  readonly session?: string;
  /** Deliveries handed to rhea on this link that it has not transferred yet (ascending ids). */
  readonly untransferred: Array<{ readonly id: number }>;
}

export async function startStandIn(options: StandInOptions): Promise<StandIn> {
  keepRawBytes();
  const log = options.log ?? ((line: string) => process.stderr.write(`asb-standin: ${line}\n`));
  const namespace = new Namespace();
  const container: any = rhea.create_container({ id: 'asb-standin', autoaccept: false, treat_modified_as_released: false });
  // Service Bus offers MSSBCBS besides ANONYMOUS and PLAIN; every credential is accepted
  // (the token arrives later through $cbs, and any token is accepted there too).
  container.sasl_server_mechanisms.enable_anonymous();
  container.sasl_server_mechanisms.enable_plain(() => true);
  container.sasl_server_mechanisms.MSSBCBS = container.sasl_server_mechanisms.ANONYMOUS;

  const outgoing = new Map<any, Outgoing>();
  const deliveries = new WeakMap<object, { entity: Entity; token: Buffer }>();
  const requestNodes = new Map<any, string>();
  /** Session receivers waiting for a session (accept-next-session with none available yet). */
  const waiting = new Map<any, { entity: Entity; timer: NodeJS.Timeout }>();
  let timer: NodeJS.Timeout | undefined;
  const now = () => Date.now();

  /** Hands deliverable messages of `entity` to its receivers with credit, then re-arms the deadline timer. */
  const pump = (entity: Entity): void => {
    for (const [sender, wait] of waiting) {
      if (wait.entity !== entity) continue;
      const accepted = entity.acceptSession(undefined, sender, now());
      if (accepted === undefined) break;
      clearTimeout(wait.timer);
      waiting.delete(sender);
      openSession(sender, entity, accepted);
    }
    for (const [sender, link] of outgoing) {
      if (link.entity !== entity) continue;
      // As on Service Bus, a message is locked (its lock clock started) only against link
      // credit the receiver gave: never more than the credit not yet spoken for.
      while (freeCredit(sender, link) > 0 && sender.sendable()) {
        const message = entity.take(link.peekLock, now(), link.session);
        if (message === undefined) break;
        const bytes = entity.compose(message);
        if (link.peekLock) {
          const token = message.lock!.token;
          const delivery = sender.send(bytes, lockTokenTag(token), 0);
          deliveries.set(delivery, { entity, token });
          link.untransferred.push(delivery);
        } else {
          link.untransferred.push(sender.send(bytes, Buffer.alloc(0), 0));
        }
      }
      if (sender.is_open() && sender._draining) sender.set_drained(true);
    }
    arm();
  };

  /** One timer for the earliest lock expiry or scheduled message of any entity. */
  const arm = (): void => {
    clearTimeout(timer);
    let next: number | undefined;
    for (const entity of namespace.entities()) {
      const due = entity.nextDeadline(now());
      if (due !== undefined && (next === undefined || due < next)) next = due;
    }
    if (next === undefined) return;
    timer = setTimeout(tick, Math.max(5, next - now()));
    timer.unref();
  };
  /** Answers a session receiver's attach: the session it got in the source filter, the lock expiry in the link properties. */
  const openSession = (sender: any, entity: Entity, accepted: { sessionId: string; until: number }): void => {
    sender.set_source({ address: sender.remote.attach.source?.address, filter: { [SESSION_FILTER]: accepted.sessionId } });
    sender.local.attach.properties = { [SESSION_LOCKED_UNTIL]: types.wrap_long(dotNetTicks(accepted.until)) };
    outgoing.set(sender, { entity, peekLock: sender.remote.attach.snd_settle_mode !== 1, session: accepted.sessionId, untransferred: [] });
    sender.attach();
  };

  /**
   * A session receiver (a source with `com.microsoft:session-filter`): the session it names,
   * or the next available one. With none available the attach is held, as Service Bus holds
   * it, until a session is (see {@link pump}) or the client's `com.microsoft:timeout` passes;
   * then it is answered without a session and detached with `com.microsoft:timeout`.
   */
  const acceptSession = (sender: any, entity: Entity, wanted: string | undefined): void => {
    // rhea answered the attach as it arrived: take that back until there is a session to name.
    sender.state.local_open = false;
    sender.state.open_requests = 0;
    const accepted = entity.acceptSession(wanted, sender, now());
    if (accepted !== undefined) return openSession(sender, entity, accepted);
    const asked = Number(sender.remote.attach.properties?.['com.microsoft:timeout']);
    const waitMs = Math.min(Number.isFinite(asked) && asked > 0 ? asked : ACCEPT_WAIT_MS, ACCEPT_WAIT_MAX_MS);
    const expiry = setTimeout(() => {
      waiting.delete(sender);
      sender.set_source({ address: sender.remote.attach.source?.address });
      sender.attach();
      sender.close({ condition: 'com.microsoft:timeout', description: `No session is available on '${entity.name}' within ${waitMs} ms.` });
    }, waitMs);
    expiry.unref();
    waiting.set(sender, { entity, timer: expiry });
  };

  const tick = (): void => {
    for (const entity of namespace.entities()) {
      for (const { owner } of entity.expireSessions(now())) {
        const link: any = owner;
        outgoing.delete(link);
        if (link.is_open?.()) link.close({ condition: 'com.microsoft:session-lock-lost', description: 'The session lock has expired.' });
      }
    }
    for (const entity of namespace.entities()) entity.expireLocks(now());
    for (const entity of namespace.entities()) pump(entity);
    arm();
  };

  container.on('sender_open', (context: any) => {
    const sender = context.sender;
    const address: string = sender.remote.attach.source?.address ?? '';
    mirrorAttach(sender);
    if (isRequestNode(address)) return;
    try {
      const entity = namespace.resolve(address);
      const filter = sender.remote.attach.source?.filter;
      const sessionful = filter !== undefined && filter !== null && SESSION_FILTER in filter;
      // The dead-letter sub-queue of a session queue is read without sessions.
      const requiresSession = entity.config.requiresSession && entity.deadLetter !== undefined;
      if (sessionful && !requiresSession) throw new NotAllowedError(`It is not possible for an entity that does not require sessions ('${entity.name}') to create a sessionful message receiver.`);
      if (!sessionful && requiresSession) throw new NotAllowedError(`It is not possible for an entity that requires sessions ('${entity.name}') to create a non-sessionful message receiver.`);
      if (sessionful) {
        const wanted: unknown = filter[SESSION_FILTER];
        return acceptSession(sender, entity, typeof wanted === 'string' ? wanted : undefined);
      }
      outgoing.set(sender, { entity, peekLock: sender.remote.attach.snd_settle_mode !== 1, untransferred: [] });
    } catch (error) {
      refuse(sender, error);
    }
  });

  container.on('receiver_open', (context: any) => {
    const receiver = context.receiver;
    const address: string = receiver.remote.attach.target?.address ?? '';
    mirrorAttach(receiver);
    receiver.local.attach.max_message_size = MAX_MESSAGE_BYTES;
    if (isRequestNode(address)) {
      requestNodes.set(receiver, address);
      return;
    }
    try {
      namespace.resolve(address);
    } catch (error) {
      refuse(receiver, error);
    }
  });

  container.on('message', (context: any) => {
    const receiver = context.receiver;
    const delivery = context.delivery;
    const node = requestNodes.get(receiver);
    if (node !== undefined) {
      const request = context.message;
      const response = answer({ namespace, pump, log, now }, node, request);
      const replyTo = request.reply_to;
      const replyLink = findReplyLink(context.connection, replyTo, node);
      delivery.update(true, messageCodec.accepted().described());
      if (replyLink === undefined) log(`no reply link for "${replyTo}" on ${node}; the response is dropped`);
      else replyLink.send(responseMessage(request, response));
      return;
    }
    const address: string = receiver.remote.attach.target?.address ?? '';
    try {
      const entity = namespace.resolve(address);
      if (entity.config.status === 'SendDisabled') {
        throw Object.assign(new Error(`Messaging entity '${entity.name}' is currently disabled for send.`), { condition: 'com.microsoft:entity-disabled' });
      }
      // rhea decodes only format 0; a transfer without a format (or a batch) arrives as bytes.
      const raw: Buffer = Buffer.isBuffer(context.message) ? context.message : context.message[RAW];
      if (raw.length > MAX_MESSAGE_BYTES) {
        throw Object.assign(new Error(`The message (${raw.length} bytes) exceeds ${MAX_MESSAGE_BYTES} bytes.`), { condition: 'amqp:link:message-size-exceeded' });
      }
      const messages = context.format === BATCH_FORMAT ? unbatch(raw) : [raw];
      for (const bytes of messages) entity.checkSendable(bytes);
      for (const bytes of messages) entity.enqueue(bytes, now());
      delivery.update(true, messageCodec.accepted().described());
      pump(entity);
    } catch (error: any) {
      log(`send to "${address}" refused: ${error.message}`);
      delivery.update(true, messageCodec.rejected({ error: { condition: error.condition ?? 'amqp:internal-error', description: error.message } }).described());
    }
  });

  const settle = (kind: 'accepted' | 'rejected' | 'released' | 'modified') => (context: any) => {
    const delivery = context.delivery;
    const held = deliveries.get(delivery);
    if (held === undefined) return;
    deliveries.delete(delivery);
    const { entity, token } = held;
    const state = delivery.remote_state ?? {};
    try {
      if (kind === 'accepted') entity.complete(token);
      else if (kind === 'released') entity.release(token);
      else if (kind === 'modified') {
        const annotations = toEntries(state.message_annotations);
        if (state.undeliverable_here === true) entity.defer(token, annotations);
        else entity.abandon(token, now(), annotations);
      } else {
        const error = state.error ?? {};
        if (error.condition !== 'com.microsoft:dead-letter') {
          throw new NotModelledError(`a rejected outcome without com.microsoft:dead-letter (${String(error.condition)})`);
        }
        const info = { ...(error.info ?? {}) };
        const reason = info.DeadLetterReason;
        const description = info.DeadLetterErrorDescription;
        delete info.DeadLetterReason;
        delete info.DeadLetterErrorDescription;
        entity.deadLetterMessage(token, now(), reason, description, toEntries(info));
      }
      if (!delivery.remote_settled) delivery.update(true, outcome(kind, state));
    } catch (error: any) {
      if (!(error instanceof LockLostError)) log(`settle (${kind}) on ${entity.name} failed: ${error.message}`);
      delivery.update(true, messageCodec.rejected({ error: { condition: error.condition ?? 'amqp:internal-error', description: error.message } }).described());
    }
    forgetSettled(delivery);
    pump(entity);
  };
  for (const kind of ['accepted', 'rejected', 'released', 'modified'] as const) container.on(kind, settle(kind));

  container.on('sendable', (context: any) => {
    const link = outgoing.get(context.sender);
    if (link !== undefined) pump(link.entity);
  });
  container.on('sender_draining', (context: any) => {
    const link = outgoing.get(context.sender);
    if (link !== undefined) pump(link.entity);
    else context.sender.set_drained(true);
  });
  /** A session receiver that closed or lost its connection frees its session (or stops waiting for one). */
  const letGo = (sender: any): void => {
    const wait = waiting.get(sender);
    if (wait !== undefined) {
      clearTimeout(wait.timer);
      waiting.delete(sender);
    }
    const link = outgoing.get(sender);
    outgoing.delete(sender);
    if (link?.session === undefined) return;
    link.entity.releaseSession(link.session, sender, now());
    pump(link.entity);
  };
  const forget = (context: any) => {
    if (context.sender) letGo(context.sender);
    if (context.receiver) requestNodes.delete(context.receiver);
  };
  container.on('sender_close', forget);
  container.on('receiver_close', forget);
  // Locks survive a closed link or connection: they lapse at lock expiry, as on Service Bus.
  const dropConnection = (context: any) => {
    for (const sender of [...outgoing.keys(), ...waiting.keys()]) if (sender.connection === context.connection) letGo(sender);
    for (const receiver of [...requestNodes.keys()]) if (receiver.connection === context.connection) requestNodes.delete(receiver);
  };
  container.on('disconnected', dropConnection);
  container.on('connection_close', (context: any) => {
    dropConnection(context);
    context.connection.close();
  });
  container.on('error', (error: unknown) => log(`connection error: ${String(error)}`));

  const server: Server = container.listen({ host: options.host ?? '127.0.0.1', port: options.port });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', () => resolve());
    server.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    port,
    namespace,
    dropConnections: () => {
      const cut = sockets.size;
      for (const socket of sockets) socket.destroy(DROPPED);
      return cut;
    },
    close: async () => {
      clearTimeout(timer);
      for (const wait of waiting.values()) clearTimeout(wait.timer);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // A client still connected (or reconnecting) must not keep the stand-in open.
      for (const socket of sockets) socket.destroy(DROPPED);
      await closed;
    },
  };
}

/**
 * The link credit not yet spoken for. rhea takes a delivery's credit only when
 * it transfers it, on its next turn, so `sender.credit` still counts the
 * deliveries handed to it in this turn: without subtracting them, a receiver
 * asking for one message got every waiting message locked and queued behind
 * it in rhea's buffer, where their locks lapsed before they were even sent
 * (each then sent with a dead lock token while the message went out again).
 */
function freeCredit(sender: any, link: Outgoing): number {
  const transferredBelow: number = sender.session.outgoing.next_pending_delivery;
  while (link.untransferred.length > 0 && link.untransferred[0]!.id < transferredBelow) link.untransferred.shift();
  return sender.credit - link.untransferred.length;
}

/**
 * Drops a delivery the stand-in has settled from rhea's session buffer. A
 * PeekLock receiver (rcv-settle-mode second, as both SDKs open it) settles only
 * after the broker did and sends nothing more, but rhea frees a sent delivery
 * only once the peer settled it too: its 2048-slot buffer would fill and the
 * link stall after 2048 deliveries, which Service Bus does not do.
 */
function forgetSettled(delivery: any): void {
  if (delivery.settled) delivery.remote_settled = true;
}

/** A time as .NET ticks (100 ns since 0001-01-01), big-endian: how Service Bus sends a session's lock expiry. */
function dotNetTicks(ms: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigInt64BE(BigInt(ms) * 10_000n + 621_355_968_000_000_000n);
  return bytes;
}

/** rhea decodes a transfer before handing it over; the stand-in keeps the original bytes beside it. */
function keepRawBytes(): void {
  const codec: any = messageCodec;
  if (codec[RAW]) return;
  const decode = codec.decode;
  codec.decode = (buffer: Buffer) => {
    const message = decode(buffer);
    Object.defineProperty(message, RAW, { value: Buffer.from(buffer) });
    return message;
  };
  codec[RAW] = true;
}

/** The answer attaches the terminus addresses and the settle modes the client asked for. */
function mirrorAttach(link: any): void {
  const remote = link.remote.attach;
  const source: Record<string, unknown> = { address: remote.source?.address };
  if (remote.source?.filter !== undefined) source.filter = remote.source.filter;
  link.set_source(source);
  link.set_target({ address: remote.target?.address });
  link.local.attach.snd_settle_mode = remote.snd_settle_mode;
  link.local.attach.rcv_settle_mode = remote.rcv_settle_mode;
}

function isRequestNode(address: string): boolean {
  return address === '$cbs' || address === '$standin' || /\/\$management$/i.test(address) || address === '$management';
}

/** The client's receiver for responses: the link whose target is the request's reply-to, else one on the same node. */
function findReplyLink(connection: any, replyTo: string | undefined, node: string): any {
  let fallback: any;
  for (const session of connection.local_channel_map ? Object.values(connection.local_channel_map) : []) {
    for (const link of Object.values((session as any).links ?? {})) {
      const candidate: any = link;
      if (!candidate.is_sender?.() || !candidate.is_open?.()) continue;
      if (replyTo !== undefined && candidate.remote.attach?.target?.address === replyTo) return candidate;
      if (candidate.remote.attach?.source?.address === node) fallback ??= candidate;
    }
  }
  return fallback;
}

function refuse(link: any, error: unknown): void {
  const condition = (error as { condition?: string }).condition ?? 'amqp:internal-error';
  const description = error instanceof Error ? error.message : String(error);
  link.close({ condition, description });
}

/**
 * The outcome the stand-in settles with: Service Bus echoes the one the client
 * chose (an abandon comes back `modified`, a dead-letter `rejected` without an
 * error: an error on the echo is how it reports a settlement it refused).
 */
function outcome(kind: 'accepted' | 'rejected' | 'released' | 'modified', state: any): any {
  if (kind === 'accepted') return messageCodec.accepted().described();
  if (kind === 'released') return messageCodec.released().described();
  if (kind === 'modified') return messageCodec.modified({ delivery_failed: state.delivery_failed, undeliverable_here: state.undeliverable_here }).described();
  return messageCodec.rejected({}).described();
}

/** Properties to modify, as typed entries. */
function toEntries(map: unknown): Entries | undefined {
  if (map === undefined || map === null || typeof map !== 'object') return undefined;
  return Object.entries(map as Record<string, unknown>).map(([k, v]) => [types.wrap_string(k), types.wrap(v)]);
}
