/**
 * The known-answer door: a connection whose first request a hot route already knows the answer to
 * (a sold-out room's 已抢光, the grab's remembered refusal: RouteOptions.known, lib/http/route.ts)
 * is answered from its first read, before node:http builds anything for it (a parser, an
 * IncomingMessage, a ServerResponse, their headers objects and the deadline bookkeeping). That is
 * the crowd of a spike: thousands of people, each on a connection of their own, each asking once
 * and told the same thing. node:http costs a connection about a third more than reading it and
 * writing a prepared answer does (docs/hot-server.md#the-known-answer-door); this door spends only
 * the second.
 *
 * Only a request that is plainly and wholly there takes the door: one HTTP/1.1 GET or POST of a hot
 * route in the connection's first read, every header line in the strict RFC 9110 grammar (printable
 * ASCII values, no obsolete folding, no header named twice, no Transfer-Encoding), a Content-Length
 * body all present and nothing after it, and an answer the route knows and shares (a frozen reply).
 * Anything else, or anything odd, goes to node:http as it came, byte for byte (the read is handed
 * back): node's parser remains the judge of every request this door does not fully understand, so
 * the door can never read a request differently from it (no smuggling between the two).
 *
 * After its answer, a connection the client keeps alive is handed to node:http for its next
 * requests; one that asked to close is closed once the answer is sent. The hot server's other
 * connection watchers (the cap per client, the idle sweep) see every connection as before, at
 * 'connection'. A connection that sends nothing is answered 408 and closed at the header deadline,
 * as node would; one that sends part of a request is node's from that first byte, its header
 * deadline counted from there (at most twice the deadline after connecting for a client that sends
 * its first byte just before the first one runs out).
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { PEER_HEADER } from '@/lib/http/client-ip';
import type { KnownHeaders, RouteHandler } from '@/lib/http/route';
import type { Reply } from '@/lib/http/respond';
import { toHotRequest } from '@/lib/hot/node-adapter';

/** What the door needs of a hot route: which route a request names, and its handler's known answer. */
export interface DoorRoute {
  name: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each route file's handler has its own params type
  handler: RouteHandler<any>;
}

export interface KnownDoorOptions {
  /** The hot route a method and URL name (lib/hot/server.ts matchRoute over the compiled routes), or null. */
  match(method: string, url: string): { route: DoorRoute; params: Record<string, string> } | null;
  /** Told each request the door answered, as the hot server's own observe: route, status, seconds, error code. */
  observe?: (route: string, status: number, seconds: number, code: string | undefined) => void;
  /** A connection that sends nothing for this long is answered 408 and closed (node's headersTimeout; 0: 60 s). */
  headersTimeoutMs: number;
  /** node's 408 answer as the hot server writes it (with the API's security headers). */
  timeoutAnswer: string;
}

/** A first read larger than this is never a known answer's request (node's own header limit is 16 KB). */
const MAX_FIRST_READ = 8192;
/** Header lines a door request may have (a browser sends about 20). */
const MAX_HEADERS = 64;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A field value: printable ASCII, spaces and tabs inside (obs-text and controls go to node). */
const VALUE = /^[\t\x20-\x7e]*$/;
/** A request target in origin form: a path (and query) of printable ASCII, no spaces. */
const TARGET = /^\/[\x21-\x7e]*$/;

/**
 * Installs the door on a hot server: node's own connection listener (registered by http.Server's
 * constructor) is called for every connection the door does not answer and close.
 */
export function installKnownDoor(server: http.Server, o: KnownDoorOptions): void {
  const nodeListener = server.listeners('connection')[0] as ((socket: Socket) => void) | undefined;
  // (Installed before anything else listens: node's own is then the only one.)
  if (!nodeListener || server.listenerCount('connection') !== 1) throw new Error('installKnownDoor: install it on a new http.Server, before any other connection listener');
  server.removeListener('connection', nodeListener);

  /** Connections that have not sent a byte yet, and since when (ms). */
  const silent = new Map<Socket, number>();
  const deadline = o.headersTimeoutMs > 0 ? o.headersTimeoutMs : 60_000;

  // http.Server's own setting (true: node's parser decides what a client's half-close means).
  const halfOpen = (server as unknown as { allowHalfOpen?: boolean }).allowHalfOpen ?? true;
  const toNode = (socket: Socket, read: Buffer | null): void => {
    socket.removeListener('data', onFirstRead);
    socket.allowHalfOpen = halfOpen;
    // Back in the stream before node's listener reads it: node's parser reads it first, then the
    // rest of the connection (node:http takes a socket with data already read this way).
    if (read) socket.unshift(read);
    Reflect.apply(nodeListener, server, [socket]);
  };

  function onFirstRead(this: Socket, chunk: Buffer): void {
    silent.delete(this);
    let answered = NOT_KNOWN;
    try {
      answered = answerKnown(this, chunk, limits, o);
    } catch {
      // A known answer that threw (none does today): node's path asks again and answers it, a 500
      // at worst, as a throw there would be; never an exception out of the socket's 'data'.
      answered = NOT_KNOWN;
    }
    if (answered === NOT_KNOWN) toNode(this, chunk);
    else if (answered === KEEP_ALIVE) toNode(this, null);
    else this.removeListener('data', onFirstRead); // closing: the answer is its last write
  }

  // node's limits on a request's head, if set lower than the door's own: the door never answers a
  // request node would refuse (431) or cut.
  const limits = {
    read: Math.min(MAX_FIRST_READ, (server as unknown as { maxHeaderSize?: number }).maxHeaderSize ?? http.maxHeaderSize),
    headers: Math.min(MAX_HEADERS, server.maxHeadersCount || MAX_HEADERS),
  };

  server.prependListener('connection', (socket: Socket) => {
    silent.set(socket, Date.now());
    // node's listener adds the socket's 'error' handling; until it has the socket, a reset (or a
    // write to a closing socket) would be an 'error' nobody listens to, thrown out of the process.
    socket.on('error', ignore);
    // A client that closes before its first byte closes the socket (and frees its place under the
    // cap at once), without a listener for it: the stream ends its side when the client's ends.
    socket.allowHalfOpen = false;
    socket.on('data', onFirstRead);
  });

  const sweep = () => {
    const now = Date.now();
    const closing = !server.listening;
    for (const [socket, since] of silent) {
      if (socket.destroyed) silent.delete(socket);
      else if (closing || now - since >= deadline) {
        silent.delete(socket);
        if (!closing) socket.write(o.timeoutAnswer);
        socket.destroy();
      }
    }
  };
  const timer = setInterval(sweep, Math.max(50, Math.min(1000, Math.floor(deadline / 10))));
  timer.unref();
  server.once('close', () => clearInterval(timer));
}

function ignore(): void {}

const NOT_KNOWN = 0;
const KEEP_ALIVE = 1;
const CLOSING = 2;

/** The first read of a connection, answered here if it is a known answer's whole request. */
function answerKnown(socket: Socket, chunk: Buffer, limits: { read: number; headers: number }, o: KnownDoorOptions): number {
  if (chunk.length > limits.read) return NOT_KNOWN;
  const started = performance.now();
  const text = chunk.toString('latin1');
  const req = parseWhole(text, limits.headers);
  if (req === null) return NOT_KNOWN;
  const hot = o.match(req.method, req.url);
  const known = hot?.route.handler.known;
  if (!hot || !known) return NOT_KNOWN;
  // The peer header is the server's word, never the client's (as lib/hot/server.ts serve()).
  req.headers[PEER_HEADER] = socket.remoteAddress ?? '';
  doorHeaders.raw = req.headers;
  let value: unknown;
  try {
    value = known(hot.params, doorHeaders);
  } finally {
    doorHeaders.raw = undefined;
  }
  if (value === undefined) return NOT_KNOWN;
  // The route core turns the known value into its reply (security headers, the error's status):
  // one frozen reply per shared value, serialized once below.
  const out = hot.route.handler.core(toHotRequest(req as unknown as http.IncomingMessage, null), hot.params, undefined, value);
  if (out instanceof Promise || out instanceof Response) {
    // Not a shared answer after all (no route's known gives one today): node:http answers it, and
    // asks `known` again (a known answer that counts itself would count this one twice).
    if (out instanceof Promise) out.catch(() => undefined);
    return NOT_KNOWN;
  }
  const reply = out;
  // Everything that could throw before the write (a throw after it would have node answer again).
  const wire = onTheWire(reply, req.close);
  o.observe?.(hot.route.name, reply.status, (performance.now() - started) / 1000, (reply.body as { error?: { code?: string } }).error?.code);
  socket.write(wire);
  // As node ends a `Connection: close` answer: the socket is destroyed once the answer is sent.
  if (req.close) (socket as Socket & { destroySoon(): void }).destroySoon();
  return req.close ? CLOSING : KEEP_ALIVE;
}

interface DoorRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** The client asked to close the connection after this answer. */
  close: boolean;
}

/**
 * The request, if the read holds exactly one whole, plain HTTP/1.1 GET or POST; null for anything
 * else (node's parser then reads it). Header names are lower-cased; a name twice is null (node
 * joins or refuses repeats, by rules this door does not copy).
 */
export function parseWhole(text: string, maxHeaders = MAX_HEADERS): DoorRequest | null {
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const lineEnd = text.indexOf('\r\n');
  const line = text.slice(0, lineEnd);
  const sp1 = line.indexOf(' ');
  const sp2 = line.indexOf(' ', sp1 + 1);
  if (sp1 < 0 || sp2 < 0 || line.indexOf(' ', sp2 + 1) >= 0) return null;
  const method = line.slice(0, sp1);
  if (method !== 'GET' && method !== 'POST') return null;
  if (line.slice(sp2 + 1) !== 'HTTP/1.1') return null;
  const url = line.slice(sp1 + 1, sp2);
  if (!TARGET.test(url)) return null;
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  let count = 0;
  let length = 0;
  for (let at = lineEnd + 2; at < headEnd; ) {
    const end = text.indexOf('\r\n', at);
    const field = text.slice(at, end);
    at = end + 2;
    if (++count > maxHeaders) return null;
    const colon = field.indexOf(':');
    if (colon <= 0) return null;
    const name = field.slice(0, colon);
    if (!TOKEN.test(name)) return null;
    const raw = field.slice(colon + 1);
    if (!VALUE.test(raw)) return null;
    const value = raw.trim(); // only spaces and tabs here: the optional whitespace around a value
    const key = name.toLowerCase();
    if (key in headers) return null;
    headers[key] = value;
  }
  // Chunked bodies, 100-continue and a request without a Host (node answers it 400): node's.
  if (headers['transfer-encoding'] !== undefined || headers.expect !== undefined || headers.host === undefined) return null;
  const declared = headers['content-length'];
  if (declared !== undefined) {
    if (!/^\d{1,7}$/.test(declared)) return null;
    length = Number(declared);
  }
  // Exactly the declared body, and nothing after it (a pipelined request is node's to frame).
  if (text.length - (headEnd + 4) !== length) return null;
  if (method === 'GET' && length > 0) return null;
  const connection = headers.connection?.toLowerCase();
  let close = false;
  if (connection !== undefined) {
    for (const option of connection.split(',')) {
      const o = option.trim();
      if (o === 'close') close = true;
      else if (o !== 'keep-alive' && o !== '') return null; // upgrade and the rest: node's
    }
  }
  return { method, url, headers, close };
}

/** A known answer's view of the door's headers: one reader, pointed at each request in turn. */
const doorHeaders: KnownHeaders & { raw: Record<string, string> | undefined } = {
  raw: undefined,
  get(name: string): string | null {
    return this.raw?.[name.toLowerCase()] ?? null;
  },
};

/**
 * A reply as bytes on the wire, as node:http writes a flat-header writeHead of it (status line,
 * content type and length, the reply's headers, Date, Connection), cached per frozen reply for the
 * current second (the Date line changes once a second, as node's own).
 */
function onTheWire(reply: Reply, close: boolean): Buffer {
  const second = Math.floor(Date.now() / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateLine = `Date: ${new Date(second * 1000).toUTCString()}\r\n`;
    wires = new WeakMap();
  }
  const frozen = Object.isFrozen(reply);
  const cached = frozen ? wires.get(reply) : undefined;
  const which = close ? 1 : 0;
  if (cached?.[which]) return cached[which];
  const body = JSON.stringify(reply.body);
  let head = `HTTP/1.1 ${reply.status} ${http.STATUS_CODES[reply.status] ?? 'unknown'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
  if (reply.headers) for (const k in reply.headers) head += `${k}: ${reply.headers[k]}\r\n`;
  const wire = Buffer.from(`${head}${dateLine}Connection: ${close ? 'close' : 'keep-alive'}\r\n\r\n${body}`);
  if (frozen) {
    const pair = cached ?? [undefined, undefined];
    pair[which] = wire;
    wires.set(reply, pair);
  }
  return wire;
}

let dateSecond = -1;
let dateLine = '';
let wires = new WeakMap<Reply, [Buffer | undefined, Buffer | undefined]>();
