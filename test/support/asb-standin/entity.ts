// One Service Bus entity of the stand-in: a queue, or its `$DeadLetterQueue`
// sub-queue. It holds messages in sequence-number order, locks them for
// PeekLock receivers, counts failed deliveries the way Service Bus puts them
// on the wire (AMQP `delivery-count`: 0 on the first delivery), and moves a
// message whose count reaches MaxDeliveryCount to the dead-letter sub-queue.
import {
  encodeSections,
  entryValue,
  headerFields,
  headerSection,
  mapEntries,
  mapSection,
  newLockToken,
  SECTION,
  sectionValue,
  setEntry,
  splitSections,
  tokenText,
  types,
  withMessageId,
  type Entries,
  type HeaderFields,
  type Section,
} from './wire.js';

/** What an entity is configured with (Service Bus defaults unless set). */
export interface QueueConfig {
  /** Deliveries before the broker dead-letters a message itself (Service Bus default 10). */
  maxDeliveryCount: number;
  /** How long a PeekLock lock lasts (Service Bus default 60 s). */
  lockDurationMs: number;
  /** `SendDisabled` refuses sends (a failed write); `Active` is normal. */
  status: 'Active' | 'SendDisabled';
  /**
   * `RequiresDuplicateDetection`: a message whose MessageId was logged within
   * {@link duplicateDetectionWindowMs} is accepted and dropped (scheduled messages included).
   */
  requiresDuplicateDetection: boolean;
  /** `DuplicateDetectionHistoryTimeWindow` (Service Bus default 10 minutes). */
  duplicateDetectionWindowMs: number;
  /**
   * `RequiresSession`: every message needs a SessionId, and only a session receiver (one that
   * accepted a session and holds its lock) receives, in order, the messages of its session.
   */
  requiresSession: boolean;
}

export const DEFAULT_CONFIG: QueueConfig = {
  maxDeliveryCount: 10,
  lockDurationMs: 60_000,
  status: 'Active',
  requiresDuplicateDetection: false,
  duplicateDetectionWindowMs: 600_000,
  requiresSession: false,
};

/** A message as the entity keeps it. */
export interface StoredMessage {
  readonly sequenceNumber: number;
  readonly header: HeaderFields;
  /** Message annotations as sent, plus the ones the broker adds (dead-letter source). */
  annotations: Entries;
  /** The SessionId (AMQP `group-id`), if the sender set one. */
  readonly sessionId: string | undefined;
  /** Application properties, typed as sent (edited by abandon/dead-letter properties-to-modify). */
  applicationProperties: Entries | undefined;
  /** Every other section (properties, body, footer), byte for byte. */
  readonly rest: Section[];
  readonly enqueuedAt: number;
  /** Not deliverable before this time (scheduled enqueue time). */
  visibleAt: number;
  /** The wire delivery-count: failed deliveries so far (abandons, expired locks). */
  deliveryCount: number;
  deferred: boolean;
  /** A message of a session is locked by its session's lock (`session`), not a lock of its own. */
  lock: { token: Buffer; until: number; session?: string } | undefined;
}

/** A session's lock: which receiver link holds it, and until when. */
interface SessionLock {
  readonly owner: unknown;
  until: number;
}

/** Settlement refused because the lock is gone (expired, or settled already). */
export class LockLostError extends Error {
  constructor(
    message: string,
    readonly condition: string = 'com.microsoft:message-lock-lost',
  ) {
    super(message);
  }
}

/** A session asked for by id is locked by another receiver. */
export class SessionCannotBeLockedError extends Error {
  readonly condition = 'com.microsoft:session-cannot-be-locked';
}

/** A send or receiver the entity refuses (a message without a SessionId on a session entity, a receiver of the wrong kind). */
export class NotAllowedError extends Error {
  readonly condition = 'amqp:not-allowed';
}

export class Entity {
  private readonly messages = new Map<number, StoredMessage>();
  private readonly locks = new Map<string, StoredMessage>();
  /**
   * Messages enqueued for a later time, until they are due: with `locks`, all that
   * {@link nextDeadline} reads, so the deadline timer, re-armed on every delivery and
   * settlement, never walks the whole namespace (thousands of messages after a test run).
   */
  private readonly scheduled = new Set<StoredMessage>();
  /** Duplicate detection's history: MessageId → when it was logged, oldest first. */
  private readonly logged = new Map<string, number>();
  /** Locked sessions by SessionId. */
  private readonly sessions = new Map<string, SessionLock>();
  private nextSequence = 1;

  /**
   * @param name - the entity path as clients address it (`orders`, `orders/$DeadLetterQueue`)
   * @param config - shared with the dead-letter sub-queue
   * @param deadLetter - where MaxDeliveryCount and explicit dead-letters move a message (absent on a DLQ)
   */
  constructor(
    readonly name: string,
    readonly config: QueueConfig,
    readonly deadLetter?: Entity,
  ) {}

  /**
   * Enqueues one encoded message (honouring `x-opt-scheduled-enqueue-time`); returns its
   * sequence number. A duplicate that duplicate detection drops still takes a sequence number
   * (the send succeeds; there is nothing behind the number).
   */
  enqueue(bytes: Buffer, now: number, extraAnnotations: Entries = []): number {
    const sections = splitSections(bytes);
    const sessionId = this.checkSendable(sections);
    if (this.isDuplicate(sections, now)) return this.nextSequence++;
    const annotations = mapEntries(sections.find((s) => s.code === SECTION.messageAnnotations));
    for (const [key, value] of extraAnnotations) setEntry(annotations, key, value);
    const scheduled = entryValue(annotations, 'x-opt-scheduled-enqueue-time');
    const appProps = sections.find((s) => s.code === SECTION.applicationProperties);
    const sequenceNumber = this.nextSequence++;
    const message: StoredMessage = {
      sequenceNumber,
      header: headerFields(sections.find((s) => s.code === SECTION.header)),
      sessionId,
      annotations,
      applicationProperties: appProps === undefined ? undefined : mapEntries(appProps),
      rest: withMessageId(sections.filter((s) => !OWNED.has(s.code))),
      enqueuedAt: now,
      visibleAt: scheduledTime(scheduled) ?? now,
      deliveryCount: 0,
      deferred: false,
      lock: undefined,
    };
    this.messages.set(sequenceNumber, message);
    if (message.visibleAt > now) this.scheduled.add(message);
    return sequenceNumber;
  }

  /**
   * The message's SessionId; throws for a message a session entity refuses (none set).
   * Call it for every message of a batch before enqueuing any.
   */
  checkSendable(sections: Section[] | Buffer): string | undefined {
    const sessionId = sessionIdOf(Buffer.isBuffer(sections) ? splitSections(sections) : sections);
    if (this.config.requiresSession && this.deadLetter !== undefined && sessionId === undefined) {
      throw new NotAllowedError(`The SessionId was not set on a message, and it cannot be sent to the entity '${this.name}', which requires sessions.`);
    }
    return sessionId;
  }

  /**
   * Locks a session for `owner` (a session receiver link): the one asked for, or, with none
   * asked for, the session of the oldest deliverable message whose session nobody holds.
   * Returns the session and its lock expiry, or undefined when no session is available. A
   * session held by another receiver cannot be locked (SessionCannotBeLocked).
   */
  acceptSession(wanted: string | undefined, owner: unknown, now: number): { sessionId: string; until: number } | undefined {
    this.expireSessions(now);
    let sessionId = wanted;
    if (sessionId === undefined) {
      for (const message of this.messages.values()) {
        if (message.sessionId === undefined || this.sessions.has(message.sessionId)) continue;
        if (message.lock !== undefined || message.deferred || message.visibleAt > now) continue;
        sessionId = message.sessionId;
        break;
      }
      if (sessionId === undefined) return undefined;
    } else if (this.sessions.has(sessionId) && this.sessions.get(sessionId)!.owner !== owner) {
      throw new SessionCannotBeLockedError(`The requested session '${sessionId}' cannot be accepted. It may be locked by another receiver.`);
    }
    const until = now + this.config.lockDurationMs;
    this.sessions.set(sessionId, { owner, until });
    return { sessionId, until };
  }

  /** Renews a session's lock for another lock duration; returns the new expiry. */
  renewSession(sessionId: string, now: number): number {
    this.expireSessions(now);
    const lock = this.sessions.get(sessionId);
    if (lock === undefined) throw new LockLostError(`The session lock has expired on the session '${sessionId}' (entity ${this.name}).`, SESSION_LOCK_LOST);
    lock.until = now + this.config.lockDurationMs;
    return lock.until;
  }

  /**
   * Releases a session its receiver closed (or lost with its connection): the session is free
   * at once, and a message of it still locked is handed back, counted as a failed delivery.
   */
  releaseSession(sessionId: string, owner: unknown, now: number): void {
    if (this.sessions.get(sessionId)?.owner !== owner) return;
    this.sessions.delete(sessionId);
    for (const message of [...this.locks.values()]) {
      if (message.lock?.session !== sessionId) continue;
      this.unlock(message);
      this.failedDelivery(message, now);
    }
  }

  /** Releases every session whose lock expired; returns them with the receivers that held them. */
  expireSessions(now: number): Array<{ sessionId: string; owner: unknown }> {
    const expired: Array<{ sessionId: string; owner: unknown }> = [];
    for (const [sessionId, lock] of [...this.sessions]) {
      if (lock.until > now) continue;
      expired.push({ sessionId, owner: lock.owner });
      this.releaseSession(sessionId, lock.owner, now);
    }
    return expired;
  }

  /**
   * Duplicate detection as Service Bus documents it: with `RequiresDuplicateDetection`, the
   * MessageId of every message sent is logged for the history window, and a message whose
   * MessageId is logged is reported accepted but dropped. Only the MessageId counts (a
   * non-partitioned entity); scheduled messages are logged and dropped like any other. A
   * message without one gets a fresh id (see {@link withMessageId}), so it is never a duplicate.
   */
  private isDuplicate(sections: Section[], now: number): boolean {
    if (!this.config.requiresDuplicateDetection) return false;
    for (const [id, at] of this.logged) {
      if (now - at < this.config.duplicateDetectionWindowMs) break;
      this.logged.delete(id);
    }
    const id = messageIdKey(sections);
    if (id === undefined) return false;
    if (this.logged.has(id)) return true;
    this.logged.set(id, now);
    return false;
  }

  /** Removes a scheduled message that is not yet visible. */
  cancelScheduled(sequenceNumber: number, now: number): boolean {
    const message = this.messages.get(sequenceNumber);
    if (message === undefined || message.visibleAt <= now) return false;
    this.messages.delete(sequenceNumber);
    return true;
  }

  /**
   * The next deliverable message: visible, not locked, not deferred; on a session
   * entity the next one of `session`, which the receiver must hold. In PeekLock mode
   * it is locked (a session's message by the session lock); in ReceiveAndDelete mode
   * it is removed.
   */
  take(peekLock: boolean, now: number, session?: string): StoredMessage | undefined {
    const sessionLock = session === undefined ? undefined : this.sessions.get(session);
    if (session !== undefined && (sessionLock === undefined || sessionLock.until <= now)) return undefined;
    for (const message of this.messages.values()) {
      if (session !== undefined && message.sessionId !== session) continue;
      if (message.lock !== undefined || message.deferred || message.visibleAt > now) continue;
      if (peekLock) {
        message.lock = session === undefined
          ? { token: newLockToken(), until: now + this.config.lockDurationMs }
          : { token: newLockToken(), until: sessionLock!.until, session };
        this.locks.set(tokenText(message.lock.token), message);
      } else {
        this.messages.delete(message.sequenceNumber);
      }
      return message;
    }
    return undefined;
  }

  /** The bytes a receiver gets: the broker's header and annotations, the sender's sections unchanged. */
  compose(message: StoredMessage): Buffer {
    const annotations: Entries = message.annotations.map(([k, v]) => [k, v]);
    setEntry(annotations, types.wrap_symbol('x-opt-sequence-number'), types.wrap_long(message.sequenceNumber));
    setEntry(annotations, types.wrap_symbol('x-opt-enqueued-time'), types.wrap_timestamp(message.enqueuedAt));
    if (message.lock !== undefined) {
      setEntry(annotations, types.wrap_symbol('x-opt-lock-token'), types.wrap_uuid(message.lock.token));
      setEntry(annotations, types.wrap_symbol('x-opt-locked-until'), types.wrap_timestamp(message.lock.until));
    }
    if (message.deferred) setEntry(annotations, types.wrap_symbol('x-opt-message-state'), types.wrap_int(1));
    else if (message.visibleAt > Date.now()) setEntry(annotations, types.wrap_symbol('x-opt-message-state'), types.wrap_int(2));
    const sections: Section[] = [
      headerSection(message.header, message.deliveryCount),
      mapSection(SECTION.messageAnnotations, annotations),
      ...message.rest,
    ];
    if (message.applicationProperties !== undefined) {
      sections.push(mapSection(SECTION.applicationProperties, message.applicationProperties));
    }
    return encodeSections(sections);
  }

  /** Complete: the message is gone. */
  complete(token: Buffer): void {
    const message = this.locked(token);
    this.unlock(message);
    this.messages.delete(message.sequenceNumber);
  }

  /** Abandon: unlocked, one more failed delivery; at MaxDeliveryCount moved to the dead-letter sub-queue. */
  abandon(token: Buffer, now: number, propertiesToModify?: Entries): void {
    const message = this.locked(token);
    this.modify(message, propertiesToModify);
    this.unlock(message);
    this.failedDelivery(message, now);
  }

  /** Released (AMQP `released`): unlocked without counting a failed delivery. */
  release(token: Buffer): void {
    this.unlock(this.locked(token));
  }

  /** Defer: kept, but never handed to an ordinary receiver again. */
  defer(token: Buffer, propertiesToModify?: Entries): void {
    const message = this.locked(token);
    this.modify(message, propertiesToModify);
    this.unlock(message);
    message.deferred = true;
  }

  /** Explicit dead-letter with reason and description (application properties `DeadLetterReason`, `DeadLetterErrorDescription`). */
  deadLetterMessage(token: Buffer, now: number, reason: unknown, description: unknown, propertiesToModify?: Entries): void {
    const message = this.locked(token);
    this.modify(message, propertiesToModify);
    this.unlock(message);
    this.moveToDeadLetter(message, now, reason, description);
  }

  /** Renews a lock for another lock duration; returns the new expiry. */
  renew(token: Buffer, now: number): number {
    const message = this.locked(token);
    if (message.lock!.session !== undefined) throw new NotAllowedError('a message of a session is locked by its session: renew the session lock');
    message.lock!.until = now + this.config.lockDurationMs;
    return message.lock!.until;
  }

  /** Expires due locks (each counts as a failed delivery); returns whether anything changed. */
  expireLocks(now: number): boolean {
    let changed = false;
    for (const message of [...this.locks.values()]) {
      if (message.lock!.session !== undefined || message.lock!.until > now) continue;
      this.unlock(message);
      this.failedDelivery(message, now);
      changed = true;
    }
    return changed;
  }

  /** The earliest future time something becomes due here (a lock expiry or a scheduled message). */
  nextDeadline(now: number): number | undefined {
    let next: number | undefined;
    for (const message of this.locks.values()) {
      const due = message.lock?.session === undefined ? message.lock?.until : undefined;
      if (due !== undefined && (next === undefined || due < next)) next = due;
    }
    for (const message of this.scheduled) {
      // Due by now, or gone (cancelled, or received once due): no deadline of its own any more.
      if (message.visibleAt <= now || this.messages.get(message.sequenceNumber) !== message) {
        this.scheduled.delete(message);
        continue;
      }
      if (next === undefined || message.visibleAt < next) next = message.visibleAt;
    }
    for (const lock of this.sessions.values()) if (next === undefined || lock.until < next) next = lock.until;
    return next;
  }

  /** Up to `count` messages from `fromSequence` on (of one session, if given), without locking (peek). */
  peek(fromSequence: number, count: number, session?: string): StoredMessage[] {
    return [...this.messages.values()].filter((m) => m.sequenceNumber >= fromSequence && (session === undefined || m.sessionId === session)).slice(0, count);
  }

  /** Counts for the control node and log lines. */
  counts(now: number): { active: number; locked: number; scheduled: number; deferred: number } {
    let active = 0;
    let locked = 0;
    let scheduled = 0;
    let deferred = 0;
    for (const message of this.messages.values()) {
      if (message.lock !== undefined) locked++;
      else if (message.deferred) deferred++;
      else if (message.visibleAt > now) scheduled++;
      else active++;
    }
    return { active, locked, scheduled, deferred };
  }

  private locked(token: Buffer): StoredMessage {
    this.expireSessions(Date.now());
    const message = this.locks.get(tokenText(token));
    if (message === undefined) {
      throw new LockLostError(`The lock supplied is invalid: it expired, or the message was settled already (lock ${tokenText(token)}, entity ${this.name}).`);
    }
    return message;
  }

  private unlock(message: StoredMessage): void {
    if (message.lock !== undefined) this.locks.delete(tokenText(message.lock.token));
    message.lock = undefined;
  }

  private modify(message: StoredMessage, propertiesToModify: Entries | undefined): void {
    if (propertiesToModify === undefined || propertiesToModify.length === 0) return;
    message.applicationProperties ??= [];
    for (const [key, value] of propertiesToModify) setEntry(message.applicationProperties, types.wrap_string(String(key.value)), value);
  }

  private failedDelivery(message: StoredMessage, now: number): void {
    message.deliveryCount++;
    if (this.deadLetter !== undefined && message.deliveryCount >= this.config.maxDeliveryCount) {
      this.moveToDeadLetter(
        message,
        now,
        'MaxDeliveryCountExceeded',
        `Message could not be consumed after ${this.config.maxDeliveryCount} delivery attempts.`,
      );
    }
  }

  private moveToDeadLetter(message: StoredMessage, now: number, reason: unknown, description: unknown): void {
    this.messages.delete(message.sequenceNumber);
    const target = this.deadLetter;
    if (target === undefined) throw new Error(`${this.name} has no dead-letter sub-queue (a dead-letter queue cannot dead-letter)`);
    const props: Entries = (message.applicationProperties ?? []).map(([k, v]) => [k, v]);
    if (reason !== undefined && reason !== null) setEntry(props, types.wrap_string('DeadLetterReason'), types.wrap_string(String(reason)));
    if (description !== undefined && description !== null) {
      setEntry(props, types.wrap_string('DeadLetterErrorDescription'), types.wrap_string(String(description)));
    }
    const annotations: Entries = message.annotations.map(([k, v]) => [k, v]);
    setEntry(annotations, types.wrap_symbol('x-opt-deadletter-source'), types.wrap_string(this.name));
    target.adopt(message, props, annotations, now);
  }

  /** Takes over a message dead-lettered by the parent queue (new sequence number, delivery count kept). */
  private adopt(message: StoredMessage, applicationProperties: Entries, annotations: Entries, now: number): void {
    const sequenceNumber = this.nextSequence++;
    this.messages.set(sequenceNumber, {
      ...message,
      sequenceNumber,
      annotations,
      applicationProperties,
      enqueuedAt: now,
      visibleAt: now,
      deferred: false,
      lock: undefined,
    });
  }
}

const SESSION_LOCK_LOST = 'com.microsoft:session-lock-lost';

/** The SessionId of encoded sections: the AMQP properties' `group-id`. */
function sessionIdOf(sections: Section[]): string | undefined {
  const properties = sections.find((s) => s.code === SECTION.properties);
  const field = properties === undefined ? undefined : (sectionValue(properties) ?? [])[10];
  const value = field === undefined || field === null ? undefined : types.unwrap(field);
  return typeof value === 'string' ? value : undefined;
}

/** Sections the broker rewrites on delivery; everything else is re-sent byte for byte. */
const OWNED = new Set<number>([SECTION.header, SECTION.deliveryAnnotations, SECTION.messageAnnotations, SECTION.applicationProperties]);

/** The MessageId of encoded sections as a history key (its AMQP type and value), if it has one. */
function messageIdKey(sections: Section[]): string | undefined {
  const properties = sections.find((s) => s.code === SECTION.properties);
  const id = properties === undefined ? undefined : (sectionValue(properties) ?? [])[0];
  const value = id === undefined || id === null ? undefined : types.unwrap(id);
  if (value === undefined || value === null) return undefined;
  return `${String(id.type?.typecode ?? '')}:${Buffer.isBuffer(value) ? value.toString('hex') : String(value)}`;
}

function scheduledTime(value: unknown): number | undefined {
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  return undefined;
}
