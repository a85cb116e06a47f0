/**
 * Test support: a TCP proxy in front of a real service (RabbitMQ, MySQL) that a test can cut —
 * every open connection dropped, new ones refused — and restore. Real outages of a shared server
 * without touching the server itself.
 */
import net from 'node:net';

export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  /** Which way bytes stop flowing while the link is "cut" (freeze); none when it is up. */
  private frozen: 'both' | 'replies' | undefined;
  /** The port it listens on (listenPort 0: a free one, kept across restore()). */
  private bound: number | undefined;
  get port(): number {
    if (this.bound === undefined) throw new Error('proxy not started');
    return this.bound;
  }

  constructor(
    readonly listenPort: number,
    private readonly targetPort: number,
    private readonly targetHost = '127.0.0.1',
  ) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      if (this.frozen === 'both') {
        // A partitioned host: the connection "opens" (the kernel here accepts it) and nothing more.
        this.sockets.add(client);
        client.on('close', () => this.sockets.delete(client));
        client.on('error', () => client.destroy());
        client.pause();
        return;
      }
      const upstream = net.connect(this.targetPort, this.targetHost);
      const pair = { client, upstream };
      this.pairs.add(pair);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => {
          this.sockets.delete(s);
          this.pairs.delete(pair);
        });
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      if (this.frozen !== 'replies') upstream.pipe(client);
      else upstream.pause();
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.bound ?? this.listenPort, '127.0.0.1', () => resolve());
    });
    this.bound = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** The service "goes down": connections reset, the port refuses. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.frozen = undefined;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((r) => server.close(() => r()));
  }

  /**
   * A partition, not an outage: every connection stays open and nothing more arrives — no FIN, no
   * RST, the peer just goes silent. 'replies': requests still reach the service (it acts on them),
   * its answers are dropped. New connections hang the same way. thaw() lets bytes flow again.
   */
  freeze(which: 'both' | 'replies' = 'both'): void {
    this.frozen = which;
    for (const { client, upstream } of this.pairs) {
      upstream.unpipe(client);
      upstream.pause();
      if (which === 'both') {
        client.unpipe(upstream);
        client.pause();
      }
    }
  }

  /** The partition heals: what was held back is delivered. */
  thaw(): void {
    this.frozen = undefined;
    for (const { client, upstream } of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
      upstream.resume();
    }
  }

  restore(): Promise<void> {
    return this.start();
  }

  close(): Promise<void> {
    return this.cut();
  }
}
