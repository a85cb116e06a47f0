/**
 * The hot server: one node:http server that answers the flash-sale hot routes itself (through the
 * route files' own handlers, see node-adapter.ts) and hands every other request to a fallback —
 * Next's request handler in production (workers/web-server.ts), a 404 in tests.
 *
 * Every request, hot or not, carries the socket's address in PEER_HEADER, whatever the client
 * sent under that name: it is how clientIp() learns the peer behind a web Request.
 *
 * Above the admission limit (lib/hot/admission-limit.ts: fixed at `maxInFlight`, or adaptive,
 * following the admitted requests' own service time up to that ceiling), a hot request is answered
 * 503 + Retry-After at once instead of queueing: under any offered load the requests that are
 * served stay fast. A request counts only once it is complete and its caller passed auth (the
 * route core asks its response, the Admission of lib/http/route.ts): a client that sends headers
 * and then trickles or withholds its body, or comes without a valid session, holds a socket, never
 * a slot honest buyers need (nor, adaptive, a sample: the time counted starts at admission).
 *
 * What a slow or silent client may hold, on both doors (this server also carries Next's requests):
 * headers within `headersTimeoutMs`, the whole request within `requestTimeoutMs` (node's own
 * deadlines, checked by one interval per server: 408 and the socket closed), and at most
 * `maxConnectionsPerClient` open connections per client address, refused at 'connection'.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { env } from '@/lib/env';
import { connectionBucket, PEER_HEADER, type TrustedProxies } from '@/lib/http/client-ip';
import { errorReply } from '@/lib/http/respond';
import { Refusal, type Admission, type KnownHeaders, type RouteHandler } from '@/lib/http/route';
import type { Reply } from '@/lib/http/respond';
import { apiSecurityHeaders } from '@/lib/http/security-headers';
import { closeAfterAnswer, deadlineOptions, dropBody, hasBody, queueReply, readBody, sendReply, toHotRequest, writeResponse } from '@/lib/hot/node-adapter';
import { closeIdleSockets } from '@/lib/hot/idle-sockets';
import { AdmissionLimit } from '@/lib/hot/admission-limit';
import { installKnownDoor } from '@/lib/hot/known-door';
import { log } from '@/lib/log';

export interface HotRoute {
  /** Short stable name (metrics label), e.g. `grab`. */
  name: string;
  method: 'GET' | 'POST';
  /** The App Router path, e.g. `/api/seckill/[voucherId]`. */
  path: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each route file's handler has its own params type
  handler: RouteHandler<any>;
  /**
   * `ceiling`: refused only above HOT_MAX_IN_FLIGHT, never by the adaptive limit below it. For the
   * waiting room's own routes: the room is the answer to a crowd (a place, paced admission), so
   * shedding its join with a 503 would answer the crowd the way the room exists to avoid. Default
   * `limit`: the admission limit, adaptive or fixed. A function decides per request (its URL).
   */
  admission?: 'limit' | 'ceiling' | ((url: string) => 'limit' | 'ceiling');
}

interface CompiledRoute extends HotRoute {
  re: RegExp;
  params: string[];
}

export type Fallback = (req: IncomingMessage, res: ServerResponse) => unknown;
/** Called once per answered hot request: route name, status, seconds, error code when refused. */
export type Observe = (route: string, status: number, seconds: number, code: string | undefined) => void;

export interface HotServerOptions {
  routes: HotRoute[];
  fallback: Fallback;
  /** A fixed limit on hot requests in flight (used when `admission` is not given). */
  maxInFlight?: number;
  /** The admission limit to use (adaptive or fixed); default a fixed one at `maxInFlight`, else HOT_MAX_IN_FLIGHT. */
  admission?: AdmissionLimit;
  observe?: Observe;
  /** Told each request the admission limit shed, with its route's name and path params (the waiting room opens by itself on it, lib/seckill/room/auto-open.ts). */
  onShed?: (route: string, params: Record<string, string>) => void;
  /** An idle keep-alive connection is closed after this long (lib/hot/idle-sockets.ts); default 65 s, longer than the usual balancer's 60 s. */
  keepAliveMs?: number;
  /** A request's headers must arrive within this (ms); default WEB_HEADERS_TIMEOUT_MS. */
  headersTimeoutMs?: number;
  /** The whole request, headers and body, within this (ms); default WEB_REQUEST_TIMEOUT_MS. */
  requestTimeoutMs?: number;
  /** Open connections per client address (IPv6: per /64); default WEB_MAX_CONNECTIONS_PER_CLIENT, 0 = no cap. */
  maxConnectionsPerClient?: number;
  /** Peers exempt from that cap; default TRUSTED_PROXIES. */
  trustedProxies?: TrustedProxies;
  /** A connection's first request with a known answer is answered before node:http reads it (lib/hot/known-door.ts); default HOT_KNOWN_DOOR. */
  knownDoor?: boolean;
}

export function compileRoutes(routes: HotRoute[]): CompiledRoute[] {
  return routes.map((r) => {
    const params: string[] = [];
    const source = r.path.replace(/[.*+?^${}()|\\]/g, '\\$&').replace(/\\?\[(\w+)\\?\]/g, (_, p: string) => {
      params.push(p);
      return '([^/]+)';
    });
    return { ...r, re: new RegExp(`^${source}$`), params };
  });
}

/** The hot route a method + path names, with its decoded params; null when Next should answer. */
export function matchRoute(routes: CompiledRoute[], method: string | undefined, url: string) {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  // HEAD is a GET without the body (node drops it), as Next answers it for a GET route.
  const as = method === 'HEAD' ? 'GET' : method;
  for (const r of routes) {
    if (r.method !== as) continue;
    const m = r.re.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    r.params.forEach((p, i) => (params[p] = decodeSegment(m[i + 1]!)));
    return { route: r, params };
  }
  return null;
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s; // malformed escapes: the handler's id validation refuses it like any other junk
  }
}

export const SHED_REPLY: Reply = {
  status: 503,
  body: { error: { code: 'SERVICE_UNAVAILABLE', message: '抢购人数太多，请稍后再试' } },
  headers: { ...apiSecurityHeaders({ https: false }), 'Retry-After': '1' },
};
const SHED = new Refusal(SHED_REPLY);

/** Not admitted yet (or never asked: refused before auth, a public read answered...). */
const TICKET_NONE = 0;
/** Counted in flight until done(); answered without waiting on anything (no sample). */
const TICKET_ADMITTED = 1;
/** Refused above the limit. */
const TICKET_SHED = 2;
/** Counted in flight until done(); its handler waits on something: its time is a sample. */
const TICKET_WAITING = 3;

export function createHotServer(o: HotServerOptions): http.Server {
  const routes = compileRoutes(o.routes);
  const limit = o.admission ?? new AdmissionLimit({ max: o.maxInFlight ?? env.HOT_MAX_IN_FLIGHT });
  const adaptive = limit.adaptive;

  /**
   * Each response is its request's admission ticket: the route core asks it once the request is
   * complete and authenticated (Admission), done() gives the slot back. No object, closure or
   * promise per request for it; the synchronous lane (a remembered refusal) stays synchronous.
   */
  class HotResponse extends http.ServerResponse implements Admission {
    ticket = TICKET_NONE;
    /** performance.now() at admission (adaptive only: a fixed limit needs no clock). */
    admittedAt = 0;
    /** The route's path params, for onShed. */
    params: Record<string, string> | undefined = undefined;
    /** The route is refused only above the ceiling (HotRoute.admission). */
    ceilingOnly = false;
    admit(): Refusal | undefined {
      if (!limit.acquire(this.ceilingOnly)) {
        this.ticket = TICKET_SHED;
        return SHED;
      }
      this.ticket = TICKET_ADMITTED;
      if (adaptive) this.admittedAt = performance.now();
      return undefined;
    }
    waiting(): void {
      this.ticket = TICKET_WAITING;
    }
    detach(): void {
      if (this.ticket !== TICKET_ADMITTED && this.ticket !== TICKET_WAITING) return;
      this.ticket = TICKET_NONE;
      limit.release(-1, performance.now());
    }
  }

  /**
   * Answers one hot request. Synchronous when the route core answers without a promise (a
   * remembered refusal for a cached session: no Redis, no microtask); otherwise the promise it
   * returns settles once the answer is queued. Never rejects: every failure is answered here.
   * (No named closures per request: see lib/http/route.ts.)
   */
  function serveHot(req: IncomingMessage, res: HotResponse, route: CompiledRoute, params: Record<string, string>): Promise<void> | undefined {
    const started = performance.now();
    res.params = params;
    const mode = route.admission;
    res.ceilingOnly = mode === 'ceiling' || (typeof mode === 'function' && mode(req.url ?? '') === 'ceiling');
    try {
      // An answer the route already knows (the same for everyone: a sold-out room's 已抢光) needs no
      // body: answered in this turn, unread, like a request without one. node's parser drops the
      // body as it arrives (dropBody; a request run late behind a pipelined one may have some of
      // it buffered already: node dumps that one once the answer is sent, as it always did);
      // sendReply closes the connection if the body was not all there. The answer is handed to the
      // core, not asked for again: a known answer may count itself (the grab's remembered refusals do).
      const known = hasBody(req) && route.handler.known ? askKnown(route.handler.known, params, req) : undefined;
      if (known !== undefined && req.readableLength === 0 && !req.complete) dropBody(req);
      const pending = known !== undefined ? null : readBody(req, res);
      const out = pending ? pending.then((body) => route.handler.core(toHotRequest(req, body), params, res)) : route.handler.core(toHotRequest(req, null), params, res, known);
      if (!(out instanceof Promise)) return answer(res, route, out, started, false);
      return out.then((v) => answer(res, route, v, started, true)).catch((err: unknown) => failed(req, res, route, err, started));
    } catch (err) {
      failed(req, res, route, err, started);
    }
  }

  /**
   * A synchronous answer (a remembered refusal, read in this turn's I/O) joins the turn's batch; one
   * that a promise settled is written at once: its neighbours (the rest of a Redis pipeline's or a
   * confirm's grabs) are written right beside it anyway, and the turn's end may be a millisecond away.
   */
  function answer(res: HotResponse, route: CompiledRoute, out: Reply | Response, started: number, settled: boolean): Promise<void> | undefined {
    if (out instanceof Response) return writeResponse(res, out).then(() => done(res, route, out.status, undefined, started));
    if (settled) sendReply(res, out);
    else queueReply(res, out);
    done(res, route, out.status, (out.body as { error?: { code?: string } }).error?.code, started);
  }

  /** The core maps handler errors itself; this is the adapter failing (client gone, bad headers). */
  function failed(req: IncomingMessage, res: HotResponse, route: CompiledRoute, err: unknown, started: number): void {
    if (res.destroyed) {
      // The client left mid-request (a body cut at its deadline, a reset): nobody to answer and
      // nothing to log — a client leaving on purpose must not cost an error line each time.
      done(res, route, 499, 'CLIENT_GONE', started);
      return;
    }
    const reply = errorReply(err, { method: req.method, path: req.url });
    if (res.headersSent) res.destroy();
    else sendReply(res, reply); // never throws: this runs inside the request's own catch
    done(res, route, reply.status, 'ADAPTER', started);
  }

  function done(res: HotResponse, route: CompiledRoute, status: number, code: string | undefined, started: number): void {
    const ticket = res.ticket;
    const now = performance.now();
    if (ticket === TICKET_WAITING) limit.release(adaptive ? now - res.admittedAt : -1, now);
    else if (ticket === TICKET_ADMITTED) limit.release(-1, now);
    o.observe?.(route.name, status, (now - started) / 1000, ticket === TICKET_SHED ? 'SHED' : code);
    if (ticket === TICKET_SHED && o.onShed && res.params) o.onShed(route.name, res.params);
  }

  // node builds each response from this class; the types want the base class's generic signature.
  const options: http.ServerOptions = {
    ServerResponse: HotResponse as unknown as typeof http.ServerResponse,
    ...deadlineOptions(o.headersTimeoutMs ?? env.WEB_HEADERS_TIMEOUT_MS, o.requestTimeoutMs ?? env.WEB_REQUEST_TIMEOUT_MS),
  };

  const server = http.createServer(options, (req, res) => {
    // Pipelined behind an answer still going out (node queues this response until that one is
    // done): run only once it has the socket. An answer before it may close the connection (a
    // refused body's 413 says Connection: close), and then this request must not run at all:
    // its answer could never be sent (a grab done that nobody is told about).
    if (res.socket === null) {
      // node stops reading a connection whose queued answers pile up unsent; these write nothing
      // until they have the socket, so that brake never engages: a client pipelining without
      // reading its answers had this process hold every request it sent (GBs from one connection
      // in seconds). Past MAX_PIPELINED waiting, the connection is closed.
      const socket = req.socket as Socket & { [WAITING]?: number };
      const waiting = (socket[WAITING] ?? 0) + 1;
      if (waiting > MAX_PIPELINED) {
        socket.destroy();
        return;
      }
      socket[WAITING] = waiting;
      res.once('socket', () => {
        socket[WAITING]!--;
        serve(req, res);
      });
      return;
    }
    serve(req, res);
  });

  function serve(req: IncomingMessage, res: ServerResponse): void {
    delete req.headers[PEER_HEADER];
    req.headers[PEER_HEADER] = req.socket.remoteAddress ?? '';
    const hot = matchRoute(routes, req.method, req.url ?? '/');
    if (!hot) res.writeHead = writeHeadClosingUnread as ServerResponse['writeHead'];
    const work = hot ? serveHot(req, res as HotResponse, hot.route, hot.params) : o.fallback(req, res);
    if (work === undefined) return; // answered synchronously (serveHot never throws)
    Promise.resolve(work).catch((err: unknown) => {
      log.error({ err, path: req.url }, 'web server: request failed outside any handler');
      if (res.headersSent) res.destroy();
      else sendReply(res, errorReply(err));
    });
  }
  if (o.knownDoor ?? env.HOT_KNOWN_DOOR) {
    installKnownDoor(server, {
      match: (method, url) => matchRoute(routes, method, url),
      observe: o.observe,
      headersTimeoutMs: o.headersTimeoutMs ?? env.WEB_HEADERS_TIMEOUT_MS,
      timeoutAnswer: CLIENT_ERROR_ANSWERS.ERR_HTTP_REQUEST_TIMEOUT!,
    });
  }
  server.on('clientError', answerClientError);
  closeIdleSockets(server, o.keepAliveMs ?? 65_000);
  capConnectionsPerClient(server, o.maxConnectionsPerClient ?? env.WEB_MAX_CONNECTIONS_PER_CLIENT, o.trustedProxies);
  return server;
}

/** Requests one connection may have waiting behind the answer in progress (pipelined); more closes it. No client pipelines this deep for its own use. */
export const MAX_PIPELINED = 256;
const WAITING = Symbol('pipelined requests waiting');

/** node's own answers to a request it could not take (its parser's 400/431/413, a deadline's 408), with the API's security headers. */
function clientErrorAnswer(status: string): string {
  const headers = Object.entries(apiSecurityHeaders({ https: false })).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return `HTTP/1.1 ${status}\r\n${headers}Content-Length: 0\r\nConnection: close\r\n\r\n`;
}
const CLIENT_ERROR_ANSWERS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: clientErrorAnswer('431 Request Header Fields Too Large'),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: clientErrorAnswer('413 Payload Too Large'),
  ERR_HTTP_REQUEST_TIMEOUT: clientErrorAnswer('408 Request Timeout'),
};
const BAD_REQUEST_ANSWER = clientErrorAnswer('400 Bad Request');

/** As node's default 'clientError' handling (answer only if no answer started, then destroy), with the security headers. */
function answerClientError(err: NodeJS.ErrnoException, duplex: Duplex): void {
  const socket = duplex as Duplex & { _httpMessage?: ServerResponse | null };
  if (socket.writable && !socket._httpMessage?.headersSent) socket.write(CLIENT_ERROR_ANSWERS[err.code ?? ''] ?? BAD_REQUEST_ANSWER);
  socket.destroy(err);
}

const writeHead = http.ServerResponse.prototype.writeHead;

/**
 * The fallback's (Next's) writeHead: an answer that goes out while its request's body was left
 * unread — a body refused as too large (lib/http/parse.ts stops reading it), or one the handler
 * never read to the end — says `Connection: close` and closes once sent. Kept alive, the
 * connection would wait on a body nobody reads: the client's next request on it would hang until
 * the idle sweep. (Hot routes read their body before the handler: node-adapter's readBody.)
 */
function writeHeadClosingUnread(this: ServerResponse, ...args: unknown[]): ServerResponse {
  const req = this.req as IncomingMessage & { _consuming?: boolean };
  // (A request without a body counts as complete only once the listener returned: a synchronous
  // answer would otherwise close for nothing.)
  if (hasBody(req) && (!req.complete || (req._consuming === true && !req.readableEnded))) closeAfterAnswer(this);
  return Reflect.apply(writeHead, this, args) as ServerResponse;
}

/**
 * At most `max` open connections per client address (lib/http/client-ip.ts connectionBucket: an
 * IPv6 /64, trusted proxies exempt). A connection past it is destroyed as it arrives, before a
 * byte is read: a client holding many idle or slow sockets cannot exhaust the process's sockets
 * or descriptors for everyone else. Per process (node:cluster spreads connections over them).
 */
export function capConnectionsPerClient(server: http.Server, max: number, trusted?: TrustedProxies): void {
  if (max <= 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const key = connectionBucket(socket.remoteAddress, trusted); // undefined: TRUSTED_PROXIES
    if (key === null) return;
    const n = open.get(key) ?? 0;
    if (n >= max) {
      socket.destroy();
      return;
    }
    open.set(key, n + 1);
    socket.once('close', () => {
      const left = open.get(key)! - 1;
      if (left === 0) open.delete(key);
      else open.set(key, left);
    });
  });
}

/**
 * A known answer's view of node's request headers (lib/http/route.ts KnownHeaders): one reader,
 * pointed at each request in turn, since `known` is asked synchronously and keeps nothing.
 */
const knownHeaders: KnownHeaders & { req: IncomingMessage | undefined } = {
  req: undefined,
  get(name: string): string | null {
    const v = this.req?.headers[name.toLowerCase()];
    return typeof v === 'string' ? v : null;
  },
};

function askKnown(known: NonNullable<RouteHandler<Record<string, string>>['known']>, params: Record<string, string>, req: IncomingMessage): unknown {
  knownHeaders.req = req;
  try {
    return known(params, knownHeaders);
  } finally {
    knownHeaders.req = undefined;
  }
}
