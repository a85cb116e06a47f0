/**
 * One simulated person's HTTP client for the real-concurrency spike (e2e/bench/spike.ts): their own
 * keep-alive connection (one socket, like a phone's browser), opened from a given loopback source
 * address so that tens of thousands of users do not run out of one address's ephemeral ports.
 * After a socket error the next request opens a fresh connection, as a browser would.
 *
 * HTTP/1.1 by hand on a net.Socket, one request at a time: node's http client (a ClientRequest,
 * an agent, streams per response) cost ~0.6 ms of CPU per user in the spike, and the generator
 * shares the two cores with the server it measures. Answers with Content-Length or chunked bodies.
 */
import net from 'node:net';

export interface UserResponse {
  status: number;
  headers: Record<string, string>;
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

interface Pending {
  resolve: (r: UserResponse) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

const HEAD_END = Buffer.from('\r\n\r\n');

export class UserClient {
  /** performance.now() when the first connection's TCP handshake completed (NaN until then). */
  connectedAt = NaN;
  /** Connections opened (1 unless an error made the user reconnect). */
  connections = 0;
  private socket: net.Socket | undefined;
  private buf: Buffer = Buffer.alloc(0);
  private pending: Pending | undefined;
  private readonly host: string;
  private readonly port: number;
  private readonly hostHeader: string;

  constructor(private readonly o: UserClientOptions) {
    const url = new URL(o.origin);
    this.host = url.hostname;
    this.port = Number(url.port);
    this.hostHeader = url.host;
  }

  request(method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<UserResponse> {
    if (this.pending) return Promise.reject(new Error('one request at a time per user'));
    const payload = body === undefined ? '' : JSON.stringify(body);
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${this.hostHeader}\r\n`;
    for (const k in headers) head += `${k}: ${headers[k]}\r\n`;
    if (payload) head += 'content-type: application/json\r\n';
    if (payload || method !== 'GET') head += `content-length: ${Buffer.byteLength(payload)}\r\n`;
    const socket = this.socket ?? this.connect();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.fail(Object.assign(new Error('no answer in time'), { code: 'TIMEOUT' })), this.o.timeoutMs ?? 60_000);
      this.pending = { resolve, reject, timer };
      socket.write(head + '\r\n' + payload);
    });
  }

  close(): void {
    this.socket?.destroy();
    this.socket = undefined;
  }

  private connect(): net.Socket {
    const s = net.connect({ host: this.host, port: this.port, localAddress: this.o.localAddress, noDelay: true });
    this.connections++;
    this.socket = s;
    this.buf = Buffer.alloc(0);
    s.once('connect', () => {
      if (Number.isNaN(this.connectedAt)) this.connectedAt = performance.now();
    });
    s.on('data', (d: Buffer) => {
      if (this.socket !== s) return;
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
      this.parse();
    });
    s.on('error', (err) => this.socket === s && this.fail(err));
    s.on('close', () => this.socket === s && this.fail(Object.assign(new Error('connection closed'), { code: 'ECONNRESET' })));
    return s;
  }

  /** A whole answer in the buffer settles the request; anything less waits for more bytes. */
  private parse(): void {
    const end = this.buf.indexOf(HEAD_END);
    if (end < 0 || !this.pending) return;
    const lines = this.buf.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(lines[0]!.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (let i = 1; i < lines.length; i++) {
      const c = lines[i]!.indexOf(':');
      headers[lines[i]!.slice(0, c).trim().toLowerCase()] = lines[i]!.slice(c + 1).trim();
    }
    let rest = this.buf.subarray(end + 4);
    let body: Buffer;
    if (headers['transfer-encoding']?.includes('chunked')) {
      const parts: Buffer[] = [];
      for (;;) {
        const nl = rest.indexOf('\r\n');
        if (nl < 0) return;
        const size = parseInt(rest.subarray(0, nl).toString('latin1'), 16);
        if (rest.length < nl + 2 + size + 2) return;
        parts.push(rest.subarray(nl + 2, nl + 2 + size));
        rest = rest.subarray(nl + 2 + size + 2);
        if (size === 0) break;
      }
      body = Buffer.concat(parts);
    } else {
      const length = Number(headers['content-length'] ?? 0);
      if (rest.length < length) return;
      body = rest.subarray(0, length);
      rest = rest.subarray(length);
    }
    this.buf = rest;
    const p = this.pending;
    this.pending = undefined;
    clearTimeout(p.timer);
    if (headers.connection === 'close') this.close();
    let json: unknown;
    try {
      json = body.length ? JSON.parse(body.toString()) : undefined;
    } catch {
      json = undefined;
    }
    p.resolve({ status, headers, json });
  }

  /** The connection is broken: the request in flight fails, the next one opens a new connection. */
  private fail(err: Error): void {
    this.close();
    const p = this.pending;
    this.pending = undefined;
    if (p) {
      clearTimeout(p.timer);
      p.reject(err);
    }
  }
}
