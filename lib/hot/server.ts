/**
 * The hot server: one node:http server that answers the flash-sale hot routes itself (through the
 * route files' own handlers, see node-adapter.ts) and hands every other request to a fallback —
 * Next's request handler in production (workers/web-server.ts), a 404 in tests.
 *
 * Every request, hot or not, carries the socket's address in PEER_HEADER, whatever the client
 * sent under that name: it is how clientIp() learns the peer behind a web Request.
 *
 * Above `maxInFlight` hot requests at once, a hot request is answered 503 + Retry-After at once
 * instead of queueing: under any offered load the requests that are served stay fast.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { errorReply } from '@/lib/http/respond';
import type { RouteHandler } from '@/lib/http/route';
import type { Reply } from '@/lib/http/respond';
import { queueReply, readBody, sendReply, toHotRequest, writeResponse } from '@/lib/hot/node-adapter';
import { closeIdleSockets } from '@/lib/hot/idle-sockets';
import { log } from '@/lib/log';

export interface HotRoute {
  /** Short stable name (metrics label), e.g. `grab`. */
  name: string;
  method: 'GET' | 'POST';
  /** The App Router path, e.g. `/api/seckill/[voucherId]`. */
  path: string;
  handler: RouteHandler<any>;
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
  maxInFlight: number;
  observe?: Observe;
  /** An idle keep-alive connection is closed after this long (lib/hot/idle-sockets.ts); default 65 s, longer than the usual balancer's 60 s. */
  keepAliveMs?: number;
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
  for (const r of routes) {
    if (r.method !== method) continue;
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

export const SHED_REPLY = {
  status: 503,
  body: { error: { code: 'SERVICE_UNAVAILABLE', message: '抢购人数太多，请稍后再试' } },
  headers: { 'Retry-After': '1' },
};

export function createHotServer(o: HotServerOptions): http.Server {
  const routes = compileRoutes(o.routes);
  let inFlight = 0;

  /**
   * Answers one hot request. Synchronous when the route core answers without a promise (a
   * remembered refusal for a cached session: no Redis, no microtask); otherwise the promise it
   * returns settles once the answer is queued. Never rejects: every failure is answered here.
   * (No named closures per request: see lib/http/route.ts.)
   */
  function serveHot(req: IncomingMessage, res: ServerResponse, route: CompiledRoute, params: Record<string, string>): Promise<void> | undefined {
    const started = performance.now();
    if (inFlight >= o.maxInFlight) {
      queueReply(res, SHED_REPLY);
      o.observe?.(route.name, 503, (performance.now() - started) / 1000, 'SHED');
      return;
    }
    inFlight++;
    try {
      const pending = readBody(req);
      const out = pending ? pending.then((body) => route.handler.core(toHotRequest(req, body), params)) : route.handler.core(toHotRequest(req, null), params);
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
  function answer(res: ServerResponse, route: CompiledRoute, out: Reply | Response, started: number, settled: boolean): Promise<void> | undefined {
    if (out instanceof Response) return writeResponse(res, out).then(() => done(route, out.status, undefined, started));
    if (settled) sendReply(res, out);
    else queueReply(res, out);
    done(route, out.status, (out.body as { error?: { code?: string } }).error?.code, started);
  }

  /** The core maps handler errors itself; this is the adapter failing (client gone, bad headers). */
  function failed(req: IncomingMessage, res: ServerResponse, route: CompiledRoute, err: unknown, started: number): void {
    const reply = errorReply(err, { method: req.method, path: req.url });
    if (res.headersSent) res.destroy();
    else sendReply(res, reply); // never throws: this runs inside the request's own catch
    done(route, reply.status, 'ADAPTER', started);
  }

  function done(route: CompiledRoute, status: number, code: string | undefined, started: number): void {
    inFlight--;
    o.observe?.(route.name, status, (performance.now() - started) / 1000, code);
  }

  const server = http.createServer((req, res) => {
    delete req.headers[PEER_HEADER];
    req.headers[PEER_HEADER] = req.socket.remoteAddress ?? '';
    const hot = matchRoute(routes, req.method, req.url ?? '/');
    const work = hot ? serveHot(req, res, hot.route, hot.params) : o.fallback(req, res);
    if (work === undefined) return; // answered synchronously (serveHot never throws)
    Promise.resolve(work).catch((err: unknown) => {
      log.error({ err, path: req.url }, 'web server: request failed outside any handler');
      if (res.headersSent) res.destroy();
      else sendReply(res, errorReply(err));
    });
  });
  closeIdleSockets(server, o.keepAliveMs ?? 65_000);
  return server;
}
