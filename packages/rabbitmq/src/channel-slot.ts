import type { Channel, ChannelModel } from 'amqplib';
import type { ConnectionManager } from './connection.js';
import type { Logger } from '@babelqueue/core';

/**
 * A channel opened lazily on the current connection and reopened on demand
 * after it died (with its connection, or closed by the broker after a channel
 * error such as a 406 on a queue declaration).
 */
export class ChannelSlot<C extends Channel> {
  private channel: C | undefined;
  private model: ChannelModel | undefined;
  private opening: Promise<C> | undefined;

  constructor(
    private readonly connection: ConnectionManager,
    private readonly open: (model: ChannelModel) => Promise<C>,
    private readonly logger: Logger,
    private readonly label: string,
  ) {}

  /** The channel if it is open on `model` right now (no promise: the publish fast path). */
  current(model: ChannelModel): C | undefined {
    return this.model === model ? this.channel : undefined;
  }

  /** The live channel, opened (and the connection awaited, with `wait`) if needed. */
  async get(wait: boolean): Promise<C> {
    const model = await this.connection.open(wait);
    if (this.channel && this.model === model) return this.channel;
    if (this.opening && this.model === model) return this.opening;
    this.model = model;
    const opening = this.open(model).then((channel) => {
      channel.on('error', (error: Error) => this.logger.warn({ channel: this.label, error: error.message }, 'channel closed by the broker'));
      channel.on('close', () => {
        if (this.channel === channel) this.channel = undefined;
      });
      if (this.model === model) this.channel = channel;
      return channel;
    });
    this.opening = opening;
    try {
      return await opening;
    } finally {
      if (this.opening === opening) this.opening = undefined;
    }
  }
}
