/**
 * The one wrapper every route handler goes through: resolve the caller, enforce the role,
 * guard cookie-authenticated writes against CSRF, run the handler, map errors to statuses.
 *
 *   export const POST = route({ auth: 'user' }, async ({ req, user }) => grabVoucher(...));
 *
 * A handler returns plain data (sent as `{ data }`), a Response of its own, or an AppError, answered
 * as if it had been thrown (a hot refusal returns it: a throw costs more than the rest of it).
 */
import { AppError } from '@/lib/errors';
import { resolveCaller, type Caller } from '@/lib/auth/resolve';
import type { SessionUser } from '@/lib/auth/session';
import { errorReply, toResponse, type Reply } from '@/lib/http/respond';
import { clientIp, viaTrustedProxy } from '@/lib/http/client-ip';
import { slideSessionOf } from '@/lib/auth/slide';
import { apiSecurityHeaders, isHttps, withApiSecurityHeaders } from '@/lib/http/security-headers';
import type { MaybePromise } from '@/lib/maybe-promise';

export type AuthLevel = 'none' | 'optional' | 'user' | 'merchant' | 'admin';

export interface RouteContext<P, U> {
  req: Request;
  params: P;
  user: U;
  caller: Caller | null;
  ip: string;
  /** The door's limit on work in progress, when the hot server serves the request (else undefined). */
  admission: Admission | undefined;
}

type UserFor<A extends AuthLevel> = A extends 'none' | 'optional' ? SessionUser | null : SessionUser;

/**
 * A route without the framework: a web Request and its path params in, a Reply (or a Response of
 * the handler's own, e.g. a stream) out. Next calls it through the exported function; the hot
 * server (lib/hot) calls it directly and writes the Reply to the socket itself. When the caller's
 * session and the handler's answer are both known in memory (a remembered refusal), the Reply comes
 * back as a value, not a promise.
 */
export type RouteCore<P> = (req: Request, params: P, admission?: Admission, known?: unknown) => MaybePromise<Reply | Response>;

/**
 * A door's limit on work in progress (the hot server's in-flight cap). Asked once per request,
 * after the caller passed auth and the CSRF rule and before the handler runs, so only a complete,
 * authenticated request can take a slot: a stranger, a slow body or a forged token never holds one.
 * Answers a Refusal to send instead of running the handler, or undefined when admitted.
 */
export interface Admission {
  admit(): Refusal | undefined;
  /**
   * Told after admit() when the handler answered with a promise: the request waits on something
   * (Redis, the broker), and its time is what an adaptive limit learns from. One answered without
   * (a remembered refusal, a synchronous throw) waited on nothing and says nothing about congestion.
   */
  waiting(): void;
  /**
   * Told by a handler that goes on to wait for something that is not the box's work (a long-polled
   * look parked until its moment, lib/seckill/room/park.ts): the slot goes back now, with no
   * sample, so parked requests never crowd out the work the limit protects.
   */
  detach(): void;
}

/** An answer a door gives in the handler's place (already secured: sent as is). */
export class Refusal {
  constructor(readonly reply: Reply) {}
}
export type RouteHandler<P> = ((req: Request, ctx: { params: Promise<P> }) => Promise<Response>) & {
  core: RouteCore<P>;
  /**
   * The route's `known` (RouteOptions): a door may ask it before reading a request's body, which
   * such an answer never needs, and then hands a defined answer to `core` (its `known` argument)
   * instead of letting the core ask again: a known answer may count itself.
   */
  known?: (params: P, headers: KnownHeaders) => unknown;
};

/** The request's headers as a known answer may read them (a Request's Headers, or the hot server's reader of node's). */
export interface KnownHeaders {
  get(name: string): string | null;
}

export interface RouteOptions<A extends AuthLevel, P> {
  auth: A;
  /**
   * An answer this process already knows that is the same whoever asks and changes nothing (a
   * sold-out sale): given before the caller is resolved, the CSRF rule or the door's slot, so it
   * costs no session read and no Redis. Undefined: not known, the request goes the whole way.
   * The route's own validation still applies to everything it does not answer. `headers` may
   * narrow who gets it (a room's 名额已满: not a caller who shows a ticket), never widen it: the
   * headers are the client's word.
   */
  known?: (params: NoInfer<P>, headers: KnownHeaders) => unknown;
}

export function route<A extends AuthLevel, P extends Record<string, string> = Record<string, string>>(
  opts: RouteOptions<A, P>,
  handler: (ctx: RouteContext<P, UserFor<A>>) => MaybePromise<unknown>,
): RouteHandler<P> {
  // No named closures per request below: the hot server runs under tsx, whose keepNames gives each
  // one a defineProperty call. Removing them here, in serveHot and in errorReply (together with one
  // shared AppError per remembered refusal) took a sold-out storm from ~34k to ~45k req/s (docs/hot-server.md#no-named-closures-per-request).
  function run(req: Request, params: P, caller: Caller | null, admission: Admission | undefined): MaybePromise<unknown> {
    if (opts.auth === 'none') slideSessionOf(req.headers); // a logged-in visitor reading public pages stays logged in
    authorize(opts.auth, caller);
    if (caller?.via === 'cookie' && !SAFE_METHODS.has(req.method)) checkSameOrigin(req);
    if (admission === undefined) return handler({ req, params, user: (caller?.user ?? null) as UserFor<A>, caller, ip: clientIp(req.headers), admission });
    const refused = admission.admit();
    if (refused !== undefined) return refused;
    const out = handler({ req, params, user: (caller?.user ?? null) as UserFor<A>, caller, ip: clientIp(req.headers), admission });
    if (out instanceof Promise) admission.waiting();
    return out;
  }
  const core: RouteCore<P> = (req, params, admission, asked) => {
    const started = Date.now();
    const https = isHttps(req.url, req.headers);
    try {
      if (opts.known !== undefined) {
        const known = asked !== undefined ? asked : opts.known(params, req.headers);
        if (known !== undefined) return answerKnown(known, req, https, started);
      }
      const caller = opts.auth === 'none' ? null : resolveCaller(req.headers);
      // andThen() would do, but would allocate its callback on the synchronous lane too.
      const out = caller instanceof Promise ? caller.then((c) => run(req, params, c, admission)) : run(req, params, caller, admission);
      if (!(out instanceof Promise)) return answer(out, req, https, started);
      return out.then(
        (v) => answer(v, req, https, started),
        (err: unknown) => fail(err, req, https, started),
      );
    } catch (err) {
      return fail(err, req, https, started);
    }
  };
  const nextHandler = async (req: Request, ctx: { params: Promise<P> }): Promise<Response> => {
    const out = await core(req, ((await ctx?.params) ?? {}) as P);
    return out instanceof Response ? out : toResponse(out);
  };
  return Object.assign(nextHandler, { core, known: opts.known });
}

/** A handler's result as the answer: `{ data }`, its own Response, or a returned AppError's error answer. */
function answer(out: unknown, req: Request, https: boolean, started: number): Reply | Response {
  if (out instanceof AppError) return fail(out, req, https, started);
  if (out instanceof Refusal) return out.reply;
  try {
    return out instanceof Response ? withApiSecurityHeaders(out, https) : secured({ status: 200, body: { data: out } }, https);
  } catch (err) {
    return fail(err, req, https, started);
  }
}

/**
 * A known answer (RouteOptions.known) is the same for everyone who gets it (a sold-out room's
 * 已抢光, a remembered refusal): when it is one shared object that cannot change (frozen, as the
 * room's sold-out view, or one of the shared refusal errors), so is its reply, frozen, which the
 * hot server then serializes once for the whole crowd (lib/hot/node-adapter.ts writeReply). Keyed
 * by the object: a new known value (a new snapshot of the room) gets a reply of its own. Any other
 * known value is answered afresh each time, so one changed in place is never answered stale.
 */
const knownReplies = [new WeakMap<object, Reply>(), new WeakMap<object, Reply>()] as const;

function answerKnown(known: unknown, req: Request, https: boolean, started: number): Reply | Response {
  const shared = typeof known === 'object' && known !== null && (Object.isFrozen(known) || known instanceof AppError);
  if (!shared) return answer(known, req, https, started);
  const cache = knownReplies[https ? 1 : 0];
  let reply = cache.get(known);
  if (reply === undefined) {
    const out = answer(known, req, https, started);
    if (out instanceof Response) return out;
    cache.set(known, (reply = Object.freeze(out)));
  }
  return reply;
}

function fail(err: unknown, req: Request, https: boolean, started: number): Reply {
  // The context is only read when the error is logged (5xx): no URL parse for a refusal.
  return secured(errorReply(err, () => ({ method: req.method, path: new URL(req.url).pathname, ms: Date.now() - started })), https);
}

/** Both doors (Next and the hot server) send what the core returns, so the API's security headers go on here. */
function secured(reply: Reply, https: boolean): Reply {
  const base = apiSecurityHeaders({ https });
  // A literal, not `{ ...reply, headers }`: every answer passes here, and V8 (node 20) takes
  // microseconds for a spread with a property added after it.
  return { status: reply.status, body: reply.body, headers: reply.headers ? { ...base, ...reply.headers } : base };
}

function authorize(level: AuthLevel, caller: Caller | null): void {
  if (level === 'none' || level === 'optional') return;
  if (!caller) throw new AppError('UNAUTHORIZED', '请先登录');
  const role = caller.user.role;
  if (level === 'merchant' && role !== 'merchant' && role !== 'admin') throw new AppError('FORBIDDEN', '需要商家或管理员权限');
  if (level === 'admin' && role !== 'admin') throw new AppError('FORBIDDEN', '需要管理员权限');
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A GET that writes after all (the room's look with `buy=1` buys): the same rule as every other
 * write, so a cross-site link or redirect carrying the session cookie buys nothing.
 */
export function requireOwnOrigin(req: Request, caller: Caller | null): void {
  if (caller?.via === 'cookie') checkSameOrigin(req);
}

/**
 * Cookies ride along on cross-site requests; Bearer tokens do not. So a state change carried by
 * the cookie must come from our own origin (Origin header, or Sec-Fetch-Site from the browser).
 */
function checkSameOrigin(req: Request): void {
  const origin = req.headers.get('origin');
  // X-Forwarded-Host is a proxy's word only when a proxy of ours sent the request; else the client's.
  const host = (viaTrustedProxy(req.headers) ? req.headers.get('x-forwarded-host') : null) ?? req.headers.get('host');
  if (origin && host) {
    try {
      if (new URL(origin).host === host) return;
    } catch {
      /* fall through */
    }
  } else if (!origin && req.headers.get('sec-fetch-site') === 'same-origin') {
    return;
  }
  throw new AppError('CSRF', '跨站请求被拒绝');
}
