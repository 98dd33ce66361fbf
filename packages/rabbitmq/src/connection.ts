import { connect, type ChannelModel } from 'amqplib';
import type { Logger } from '@babelqueue/core';
import { ReconnectingConnection, redactCredentials } from '@babelqueue/core/binding';
import { BROKER, BrokerUnavailableError } from './errors.js';
import { writeFramesTogether } from './frame-writes.js';
import type { ResolvedOptions } from './options.js';
import { amqpUrls, maskAmqpUrl } from './url.js';

/**
 * One AMQP connection that comes back by itself (core's
 * `ReconnectingConnection`: exponential backoff, forever), over the URL's
 * host list: each attempt tries the hosts in turn, and after a loss it starts
 * with the host after the one that was lost. Only a configuration failure
 * before the first successful connection (refused login, unverifiable
 * certificate, a server that speaks AMQP 1.0) is final, since retrying does
 * not fix it. Channels are the callers' business: they ask for the current
 * connection and open channels on it, and a channel of a lost connection is
 * simply dead.
 */
export class ConnectionManager extends ReconnectingConnection<ChannelModel> {
  /** One URL per host of the URL's host list, tried in turn. */
  private readonly urls: readonly string[];
  /** The host the next attempt starts with. */
  private cursor = 0;

  constructor(private readonly options: ResolvedOptions, logger: Logger) {
    const urls = amqpUrls(options.url);
    // No `cause`: amqplib's messages may carry the URL, so only the redacted text travels.
    // Every host shares the URL's credentials: the first host's URL redacts them.
    super({ broker: BROKER, label: 'RabbitMQ', url: urls[0] ?? options.url, shownUrl: maskAmqpUrl(options.url), reconnect: options.reconnect, logger });
    this.urls = urls;
  }

  protected async dial(lost: (model: ChannelModel) => void): Promise<ChannelModel> {
    let model: ChannelModel;
    try {
      model = await this.connectAnyHost();
    } catch (cause) {
      throw speaksAmqp10(cause) ? this.wrongProtocol(cause) : cause;
    }
    writeFramesTogether(model);
    const { logger } = this.settings;
    model.on('error', (error: Error) => {
      logger.warn({ broker: this.masked, error: redactCredentials(error.message, this.settings.url) }, 'RabbitMQ connection error');
    });
    model.on('blocked', (reason: string) => logger.warn({ broker: this.masked, reason }, 'RabbitMQ blocked the connection'));
    model.on('close', () => {
      // The host that was lost is likely down: the reconnect starts with the next one.
      this.cursor = (this.cursor + 1) % this.urls.length;
      lost(model);
    });
    return model;
  }

  protected async end(model: ChannelModel): Promise<void> {
    await model.close().catch(() => undefined);
  }

  protected isFinal(cause: unknown): boolean {
    return isConfigurationFailure(cause) || (cause instanceof BrokerUnavailableError && speaksAmqp10(cause.cause));
  }

  /**
   * One attempt over the host list: each host in turn from the cursor on, the
   * first that accepts wins. When every host fails, the error of the last one
   * (a refused login or certificate of any host first: retrying cannot cure it),
   * naming each host's failure when there are several.
   */
  private async connectAnyHost(): Promise<ChannelModel> {
    const failures: { url: string; cause: unknown }[] = [];
    for (let i = 0; i < this.urls.length; i++) {
      const index = (this.cursor + i) % this.urls.length;
      const url = this.urls[index] as string;
      try {
        const model = await connect(url, {
          noDelay: true,
          // amqplib's socket inactivity bound, lifted once the handshake is done.
          timeout: this.options.connectTimeoutMs,
          ...this.options.tls,
          clientProperties: { connection_name: this.options.connectionName },
        });
        this.cursor = index;
        if (failures.length > 0) this.settings.logger.warn({ broker: maskAmqpUrl(url), skipped: failures.length }, 'connected to the next RabbitMQ host of the list');
        return model;
      } catch (cause) {
        failures.push({ url, cause });
      }
    }
    const final = failures.find((f) => isConfigurationFailure(f.cause) || speaksAmqp10(f.cause));
    if (final !== undefined) throw final.cause;
    if (failures.length < 2) throw failures[0]?.cause;
    const text = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause));
    throw new Error(`every host failed (${failures.map((f) => `${maskAmqpUrl(f.url)}: ${text(f.cause)}`).join('; ')})`);
  }

  private wrongProtocol(cause: unknown): Error {
    return new BrokerUnavailableError(BROKER,
      `${this.masked}: this server speaks AMQP 1.0, not RabbitMQ's AMQP 0-9-1; for ActiveMQ Artemis use artemis:// (the Artemis binding)`,
      { cause },
    );
  }
}

/**
 * Failures that retrying cannot cure: refused credentials or vhost, and a
 * server certificate that does not verify. Final before the first successful
 * connection (a configuration error); after it, a reconnect keeps trying.
 */
function isConfigurationFailure(error: unknown): boolean {
  const text = error instanceof Error ? error.message : String(error);
  if (/ACCESS[-_]REFUSED|\b403\b|NOT[-_]ALLOWED|\b530\b/.test(text)) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/.test(code);
}

/**
 * An AMQP 1.0 server (ActiveMQ Artemis, Azure Service Bus, Qpid) answers the
 * 0-9-1 protocol header with its own, `AMQP` then protocol id, major 1. amqplib
 * reads those bytes as a frame: type 'A', channel 'MQ', and a size whose bytes
 * are 'P', the protocol id, 1, 0 (1342177536 plain, 1342439680 with SASL),
 * reported as "Frame size … exceeds maxFrameSize". Retrying cannot cure that.
 */
function speaksAmqp10(error: unknown): boolean {
  const size = /Frame size (\d+) exceeds/.exec(error instanceof Error ? error.message : '')?.[1];
  if (size === undefined) return false;
  const n = Number(size);
  return n >>> 24 === 0x50 && ((n >>> 8) & 0xff) === 1;
}
