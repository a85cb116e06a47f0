/**
 * One simulated person's HTTP client for the real-concurrency spike (e2e/bench/spike.ts): their own
 * keep-alive connection (one socket, like a phone's browser), opened from a given loopback source
 * address so that tens of thousands of users do not run out of one address's ephemeral ports.
 * After a socket error the next request opens a fresh connection, as a browser would.
 */
import http from 'node:http';

export interface UserResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export interface UserClientOptions {
  /** http://127.0.0.1:port */
  origin: string;
  /** The source address the user's connection is bound to (127.0.0.2, ...). */
  localAddress?: string;
  /** A request without an answer for this long is an error (the user gives up on it). */
  timeoutMs?: number;
}

export class UserClient {
  /** performance.now() when the first connection's TCP handshake completed (NaN until then). */
  connectedAt = NaN;
  /** Connections opened (1 unless an error made the user reconnect). */
  connections = 0;
  private agent: http.Agent;
  private readonly host: string;
  private readonly port: number;

  constructor(private readonly o: UserClientOptions) {
    const url = new URL(o.origin);
    this.host = url.hostname;
    this.port = Number(url.port);
    this.agent = this.newAgent();
  }

  private newAgent(): http.Agent {
    return new http.Agent({ keepAlive: true, maxSockets: 1 });
  }

  request(method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<UserResponse> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const allHeaders = payload === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) };
    return new Promise((resolve, reject) => {
      const req = http.request(
        { agent: this.agent, host: this.host, port: this.port, localAddress: this.o.localAddress, method, path, headers: allHeaders, timeout: this.o.timeoutMs ?? 30_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString();
            let json: unknown;
            try {
              json = text ? JSON.parse(text) : undefined;
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, json });
          });
        },
      );
      req.on('socket', (s) => {
        if (s.connecting) {
          this.connections++;
          s.once('connect', () => {
            if (Number.isNaN(this.connectedAt)) this.connectedAt = performance.now();
          });
        }
      });
      req.on('timeout', () => req.destroy(Object.assign(new Error('no answer in time'), { code: 'TIMEOUT' })));
      req.on('error', (err) => {
        // A broken connection is not reused: the next request opens a new one.
        this.agent.destroy();
        this.agent = this.newAgent();
        reject(err);
      });
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
