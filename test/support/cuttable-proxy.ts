import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP relay in front of the real broker, so a test can cut every connection
 * (reset) or take the broker "offline" (stop listening) on demand — faults a
 * live broker cannot produce for one client only.
 */
export class CuttableProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private muted = 0;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    this.server = createServer((client) => {
      if (this.muted > 0) {
        // Taken and never answered, as a broker still starting can do: relayed nowhere.
        this.muted -= 1;
        this.sockets.add(client);
        client.on('close', () => this.sockets.delete(client));
        client.on('error', () => undefined);
        return;
      }
      const upstream = connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  /** True while it accepts connections (between {@link start} and {@link down}). */
  get up(): boolean {
    return this.server !== undefined;
  }

  /** The next `count` connections are accepted and then left silent (never relayed). */
  muteNext(count = 1): void {
    this.muted += count;
  }

  /** Resets every relayed connection; new ones are still accepted. */
  cut(): void {
    // A reset needs an open socket: one already half-closed (its peer said QUIT) only closes its
    // handle when destroyed, and a reset left pending keeps the process alive.
    for (const socket of this.sockets) {
      if (socket.readyState === 'open') socket.resetAndDestroy();
      else socket.destroy();
    }
  }

  /** Cuts everything and stops accepting connections until {@link start} again. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    const closed = server ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
    this.cut();
    await closed;
  }

  /** The broker URL through the proxy, with the scheme and credentials of `url`. */
  url(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.href;
  }
}
