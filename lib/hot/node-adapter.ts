/**
 * node:http ⇄ the route core (lib/http/route.ts). A hot request reads as the same web Request the
 * App Router would build (toHotRequest: built only when something past the method, URL and
 * headers is read), so the handler, its auth, CSRF rule, body parsing and errors are the route
 * file's own; the answer is written to the socket without building a web Response (a
 * Response + its text cost about twice the Request, docs/hot-server.md#one-definition-per-route).
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerOptions, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { MAX_BODY_BYTES, PREREAD_BODY } from '@/lib/http/parse';
import type { Reply } from '@/lib/http/respond';

/** The request declares a body (a length other than 0, or chunked). */
export function hasBody(req: IncomingMessage): boolean {
  const declared = req.headers['content-length'];
  return !((declared === undefined || declared === '0') && req.headers['transfer-encoding'] === undefined);
}

/**
 * The body (null, without a promise, when none is declared), read up to one byte past the parser's
 * cap: a bigger body still reaches the handler as "too large" (the same 413 as through Next)
 * without this process buffering all of it. Its answer then says `Connection: close` and the
 * connection closes once it is sent. A request already pipelined behind it (node's parser may have
 * framed it) is never run: the server runs a pipelined request only once its answer has the socket
 * (lib/hot/server.ts), which after a closing answer never comes.
 *
 * A request that declares no body is marked as read (node's own `_consuming`, the flag `req.read()`
 * sets): once the response finishes, node "dumps" every request stream nobody read (resume, end,
 * destroy, close), which for an empty stream is six `process.nextTick`s and their callbacks per
 * request and nothing else; the request object is simply dropped instead (docs/hot-server.md#less-of-nodes-machinery-per-request).
 * Likewise it is marked as having announced 'readable' (nobody listens), which saves the tick the
 * parser's end of stream schedules for that. If a node version stops reading either flag, it
 * behaves as before.
 */
export function readBody(req: IncomingMessage, res: ServerResponse): Promise<Buffer | null> | null {
  if (!hasBody(req)) {
    (req as IncomingMessage & { _consuming: boolean })._consuming = true;
    (req as IncomingMessage & { _readableState: { emittedReadable: boolean } })._readableState.emittedReadable = true;
    return null;
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      req.off('data', onData);
      resolve(size === 0 ? null : Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        closeAfterAnswer(res);
        finish();
      }
    };
    req.on('data', onData);
    req.once('end', finish);
    req.once('error', (err) => {
      if (!done) reject(err);
    });
  });
}

/**
 * A request whose answer does not need its body (a known answer, lib/hot/server.ts): the body is
 * dropped by node's parser as it arrives, never buffered in the request stream, and the stream is
 * never "dumped" once the response finishes. node's own `_dumped` flag is what its parser reads to
 * drop a body (`parserOnBody`) and what `_dump()` sets; `_consuming` and `emittedReadable` spare the
 * dump and the end-of-stream tick as for a request without a body (readBody). The parser still
 * frames the body (content-length or chunks), so a request behind it on the connection is parsed
 * as usual. What this spares each of a crowd told 已抢光 with a body on the request (the room's
 * join): the body pushed into the stream, then the dump's resume, read, end, destroy and close
 * (docs/hot-server.md#less-of-nodes-machinery-per-request). The flags are node 20's private
 * fields: a node that stopped honouring `_dumped` in its parser but still honoured `_consuming`
 * would buffer a dropped body and never dump it, and a body past the stream's high-water mark
 * would then pause the connection; check this path (lib/hot/keep-alive.test.ts) on a node upgrade.
 */
export function dropBody(req: IncomingMessage): void {
  const r = req as IncomingMessage & { _dumped: boolean; _consuming: boolean; _readableState: { emittedReadable: boolean } };
  r._dumped = true;
  r._consuming = true;
  r._readableState.emittedReadable = true;
}

/**
 * The answer says `Connection: close`, and once it is sent the connection is closed gently: the
 * client may still be sending the body nobody will read, and a socket closed with unread bytes
 * (or receiving more) answers them with a reset, which can destroy the answer before the client
 * read it. So the server's side is shut (FIN after the answer), whatever still arrives is read and
 * dropped away from the HTTP parser, and the socket is destroyed when the client closes its side
 * or LINGER_MS later. Only on this path: a refused body, never a normal request.
 */
export function closeAfterAnswer(res: ServerResponse): void {
  res.shouldKeepAlive = false;
  const socket = res.socket as (Socket & { destroySoon?: () => void }) | null;
  // node ends a `Connection: close` answer's socket with socket.destroySoon() (its own method).
  if (socket) socket.destroySoon = lingerThenDestroy;
}

const LINGER_MS = 2000;

function lingerThenDestroy(this: Socket): void {
  this.end();
  this.removeAllListeners('data'); // the parser's: nothing more is parsed
  this.on('data', ignore);
  this.once('end', this.destroy);
  setTimeout(destroySocket, LINGER_MS, this).unref();
  this.resume();
}

function ignore(): void {}

function destroySocket(socket: Socket): void {
  socket.destroy();
}

/**
 * The request a hot route's core sees: a web `Request` to every reader, built lazily. The route
 * core and the hot handlers read the method, the URL, a few headers and (usually) learn there is no
 * body; those are answered from node's own parsed request, and so is the body already read (under
 * PREREAD_BODY, which lib/http/parse.ts reads). Anything else (a body stream, a signal,
 * clone()...) builds the full web Request once (toWebRequest) and answers from it. Building it for
 * every request (Headers, URL, AbortSignal) was 6-7 % of a refused grab's CPU, plus its garbage.
 */
export function toHotRequest(req: IncomingMessage, body: Buffer | null): Request {
  const method = req.method ?? 'GET';
  const url = `http://hot.local${req.url ?? '/'}`;
  const headers = new NodeRequestHeaders(req.headers);
  let full: Request | undefined;
  return new Proxy({} as Request, {
    get(_, prop) {
      if (prop === 'method') return method;
      if (prop === 'url') return url;
      if (prop === 'headers') return headers;
      if (prop === 'body' && body === null && !full) return null;
      if (prop === PREREAD_BODY) return body;
      full ??= toWebRequest(req, body);
      const v: unknown = Reflect.get(full, prop, full);
      return typeof v === 'function' ? v.bind(full) : v;
    },
    // Methods, not arrow properties: under tsx's keepNames an arrow would get a defineProperty per request.
    has(_, prop) {
      return prop in (full ??= toWebRequest(req, body));
    },
  });
}

/**
 * A request's headers read from node's parsed headers (names already lower-case; repeated headers
 * read as a web Headers reads them, values joined by ", "). A write (set/append/delete, which a
 * web Request's headers allow) first copies them into a real Headers, which answers from then on.
 */
export class NodeRequestHeaders implements Headers {
  private own?: Headers;

  constructor(private readonly raw: IncomingHttpHeaders) {}

  get(name: string): string | null {
    if (this.own) return this.own.get(name);
    const v = this.raw[name.toLowerCase()];
    if (v === undefined) return null;
    return Array.isArray(v) ? v.join(', ') : v;
  }
  has(name: string): boolean {
    return this.own ? this.own.has(name) : this.raw[name.toLowerCase()] !== undefined;
  }
  getSetCookie(): string[] {
    if (this.own) return this.own.getSetCookie();
    const v = this.raw['set-cookie'];
    return v === undefined ? [] : Array.isArray(v) ? [...v] : [v];
  }
  forEach(fn: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    for (const [k, v] of this.entries()) Reflect.apply(fn, thisArg, [v, k, this]);
  }
  *entries(): HeadersIterator<[string, string]> {
    if (this.own) return yield* this.own.entries();
    for (const k of Object.keys(this.raw).sort()) {
      const v = this.get(k);
      if (v !== null) yield [k, v];
    }
  }
  *keys(): HeadersIterator<string> {
    for (const [k] of this.entries()) yield k;
  }
  *values(): HeadersIterator<string> {
    for (const [, v] of this.entries()) yield v;
  }
  [Symbol.iterator](): HeadersIterator<[string, string]> {
    return this.entries();
  }
  append(name: string, value: string): void {
    this.writable().append(name, value);
  }
  set(name: string, value: string): void {
    this.writable().set(name, value);
  }
  delete(name: string): void {
    this.writable().delete(name);
  }
  private writable(): Headers {
    return (this.own ??= new Headers([...this.entries()]));
  }
}

export function toWebRequest(req: IncomingMessage, body: Buffer | null): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  // The origin is a placeholder: handlers read the path and query from the URL, and the CSRF rule
  // reads the Host and Origin headers, never the URL's host.
  return new Request(`http://hot.local${req.url ?? '/'}`, {
    method: req.method,
    headers,
    body: body && req.method !== 'GET' && req.method !== 'HEAD' ? new Uint8Array(body) : null,
  });
}

/**
 * One writeHead with a flat header list: node then skips its per-response header map. A frozen
 * reply (one answer shared by many requests: a known answer, lib/http/route.ts answerKnown) is
 * serialized once, its body and header list kept beside it for the next request it answers.
 */
export function writeReply(res: ServerResponse, reply: Reply): void {
  const wire = onTheWire.get(reply) ?? serialize(reply);
  res.writeHead(reply.status, wire.head);
  res.end(wire.text);
}

const onTheWire = new WeakMap<Reply, { head: string[]; text: string }>();

function serialize(reply: Reply): { head: string[]; text: string } {
  const text = JSON.stringify(reply.body);
  const head: string[] = ['content-type', 'application/json', 'content-length', String(Buffer.byteLength(text))];
  if (reply.headers) for (const k in reply.headers) head.push(k, reply.headers[k]!);
  const wire = { head, text };
  if (Object.isFrozen(reply)) onTheWire.set(reply, wire);
  return wire;
}

/** A Response a handler built itself (rare on hot routes): headers, then the body streamed. */
export async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  const cookies = response.headers.getSetCookie();
  response.headers.forEach((v, k) => {
    if (k !== 'set-cookie') res.setHeader(k, v);
  });
  if (cookies.length) res.setHeader('set-cookie', cookies);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!res.write(value)) await new Promise((r) => res.once('drain', r));
  }
  res.end();
}

/**
 * The synchronous replies of one event-loop turn (answered while reading their requests), written
 * together after the turn's I/O (setImmediate runs right after the poll phase that read them, so no
 * reply waits for another turn); replies a promise settled go out at once (sendReply).
 * Writing a reply wakes whatever reads the socket; written back to back, one wake-up serves many,
 * and the kernel's cost per reply falls (docs/hot-server.md#replies-written-in-batches: 24 against 11 µs per reply for
 * a server doing 20 µs of work per request; the bare ceiling also gains 7 %).
 */
let batch: [ServerResponse, Reply][] = [];

export function queueReply(res: ServerResponse, reply: Reply): void {
  if (batch.push([res, reply]) === 1) setImmediate(flushReplies);
}

function flushReplies(): void {
  const due = batch;
  batch = [];
  for (const [res, reply] of due) sendReply(res, reply);
}

/**
 * Writes a reply now, unless the client left or an answer already went out; a reply that cannot be
 * written closes its own socket and throws nothing. For the replies that are already written back
 * to back: the ones a Redis or broker reply settles together (their continuations run one after
 * another in one microtask flush), so the batch's gain is there without waiting for the turn's end.
 */
export function sendReply(res: ServerResponse, reply: Reply): void {
  if (res.destroyed || res.headersSent) return;
  // A body the answer did not need (a known answer, lib/hot/server.ts) and that has not all arrived:
  // the connection cannot serve another request behind it, so it closes once answered.
  if (!res.req.complete && hasBody(res.req)) closeAfterAnswer(res);
  try {
    writeReply(res, reply);
  } catch {
    res.destroy(); // one unwritable reply must not strand the rest of a batch
  }
}

/**
 * A node:http server's request deadlines (0: none), and how often node checks them: one interval
 * per server (default 30 s, set only at creation), a tenth of the shorter deadline so each is kept
 * within 10 %. Shared by the hot server and Next's process of a split server.
 */
export function deadlineOptions(headersTimeout: number, requestTimeout: number): ServerOptions {
  const options: ServerOptions = {};
  if (headersTimeout > 0) options.headersTimeout = headersTimeout;
  if (requestTimeout > 0) options.requestTimeout = requestTimeout;
  const shortest = Math.min(headersTimeout || 60_000, requestTimeout || 300_000);
  options.connectionsCheckingInterval = Math.max(50, Math.min(1000, Math.floor(shortest / 10)));
  return options;
}
