import { TLSSocket } from 'node:tls';
import { SentinelConnector, type SentinelConnectionOptions } from 'ioredis';

type ErrorEmitter = Parameters<SentinelConnector['connect']>[0];
type Stream = Awaited<ReturnType<SentinelConnector['connect']>>;

/**
 * ioredis's Sentinel connector, minus a leak: its failover detector (one
 * `+switch-master` subscription per Sentinel) starts when the stream to the
 * primary connects. A client closed while that stream was still connecting
 * has no detector to clean up yet; the one started a moment later belongs to
 * no open client and reconnects to the Sentinels for ever, keeping the
 * process alive. This connector cleans it up as soon as it starts.
 */
export class ClosingSentinelConnector extends SentinelConnector {
  /** ioredis hands a `Connector` the client's whole options. */
  constructor(options: unknown) {
    super(options as SentinelConnectionOptions);
  }

  override async connect(emit: ErrorEmitter): Promise<Stream> {
    const stream = await super.connect(emit);
    // Registered after ioredis's own listener, so the detector exists by then.
    stream.once(stream instanceof TLSSocket ? 'secureConnect' : 'connect', () => {
      if (!this.connecting) this.disconnect();
    });
    return stream;
  }
}
