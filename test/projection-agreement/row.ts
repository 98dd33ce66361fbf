/**
 * One row of the projection-agreement table: a binding, on its real broker,
 * read back with the broker's own client. A new binding adds one file under
 * `rows/` exporting `row` (see rows/rabbitmq.ts for a complete one).
 */
import type { AppOptions, Transport } from '@babelqueue/core';

/** A record as the broker's own client reads it. */
export interface NativeRecord {
  /** The body (record value); null where the broker has a null value (Kafka). */
  readonly body: Buffer | null;
  /**
   * The binding's projected (contract) native fields the record carries, by
   * name, in the form the broker's client reports them; an absent field is
   * absent here too.
   */
  readonly contract: Record<string, unknown>;
  /** Every other native header (riders such as traceparent), as text. */
  readonly riders: Record<string, string>;
}

/** What a record is, for the projection it must carry. */
export type CopyKind = 'retry' | 'dead-letter';

/** How a test writes a message as a producer would. */
export interface ProduceOptions {
  /**
   * The envelope whose projection the native metadata carries; default the
   * body itself. A different one makes metadata that disagrees with the body
   * (a broken producer), so a copy must rebuild it instead of copying it.
   */
  readonly claims?: Buffer;
  /** Overrides the native schema-version field (a version-gated message). */
  readonly schemaVersion?: string;
  /** Out-of-band riders (traceparent, …). */
  readonly riders?: Readonly<Record<string, string>>;
}

/** A binding's lab on its real broker. */
export interface AgreementLab {
  /** A fresh queue (topic) name, removed or left to expire after the suite. */
  queue(prefix: string): Promise<string>;
  /** A transport for one App; retries go where `readRetry` finds them and come back to the work queue. */
  transport(): Transport;
  /** Writes one message with the broker's own client. */
  produce(queue: string, body: Buffer, options?: ProduceOptions): Promise<void>;
  /** The retry copy of `queue` the App just wrote, read without losing it (the next consume gets it). */
  readRetry(queue: string): Promise<NativeRecord>;
  /** The next record of the dead-letter queue `dlq`. */
  readDeadLetter(dlq: string): Promise<NativeRecord>;
  /**
   * The contract fields the core's projection gives for `body` when the
   * binding writes it as a `kind` copy of `queue`: only a body that is an
   * accepted envelope projects its fields (anything else projects none).
   */
  project(body: Buffer, kind: CopyKind, queue: string): Record<string, unknown>;
  close(): Promise<void>;
}

export interface AgreementRow {
  /** The binding, as named in conformance/settlement.json. */
  readonly binding: string;
  /** A reason to skip (no broker here), or false. */
  readonly skip: string | false;
  /**
   * The contract field names of the attempts and schema-version projection
   * (empty when the binding has none), and of the route every copy keeps as
   * the delivery arrived with it, even on a poison record (Pulsar's `bq-job`,
   * seed 000: routing is preserved).
   */
  readonly fields: { readonly attempts?: string; readonly schemaVersion?: string; readonly route?: string };
  /** The binding has a native version gate (a schema-version field a producer can set). */
  readonly versionGate: boolean;
  /** Dead-letter records carry the delivery's riders. */
  readonly ridersOnDeadLetter: boolean;
  /** Poison without a DLQ takes the bounded retry (the binding's `poisonWithoutDeadLetter: 'bounded-retry'`). */
  readonly poisonRetry: boolean;
  /**
   * App options under which a failed delivery is retried by a copy the binding
   * writes (Artemis, Service Bus: a backoff delay; an immediate retry is a
   * native redelivery there, with nothing re-emitted). Default none.
   */
  readonly retryOptions?: Partial<AppOptions>;
  /**
   * Set (saying why) when the binding never writes a retry copy: a retry
   * releases the delivery itself in place (SQS). The row then checks that the
   * released message is the delivery untouched (body and metadata as
   * produced), and `readRetry` reads it back with the broker's client. Where
   * that read is itself a counted receive (SQS has no peek), the next consume
   * sees one attempt more: the test allows for it with a third attempt.
   */
  readonly retryInPlace?: string;
  open(): Promise<AgreementLab>;
}
