/**
 * The one wrapper every route handler goes through: resolve the caller, enforce the role,
 * guard cookie-authenticated writes against CSRF, run the handler, map errors to statuses.
 *
 *   export const POST = route({ auth: 'user' }, async ({ req, user }) => grabVoucher(...));
 *
 * A handler returns plain data (sent as `{ data }`) or a Response of its own.
 */
import { AppError } from '@/lib/errors';
import { resolveCaller, type Caller } from '@/lib/auth/resolve';
import type { SessionUser } from '@/lib/auth/session';
import { errorReply, toResponse, type Reply } from '@/lib/http/respond';
import { clientIp } from '@/lib/http/client-ip';
import { slideSessionOf } from '@/lib/auth/slide';
import { apiSecurityHeaders, isHttps, withApiSecurityHeaders } from '@/lib/http/security-headers';

export type AuthLevel = 'none' | 'optional' | 'user' | 'merchant' | 'admin';

export interface RouteContext<P, U> {
  req: Request;
  params: P;
  user: U;
  caller: Caller | null;
  ip: string;
}

type UserFor<A extends AuthLevel> = A extends 'none' | 'optional' ? SessionUser | null : SessionUser;

/**
 * A route without the framework: a web Request and its path params in, a Reply (or a Response of
 * the handler's own, e.g. a stream) out. Next calls it through the exported function; the hot
 * server (lib/hot) calls it directly and writes the Reply to the socket itself.
 */
export type RouteCore<P> = (req: Request, params: P) => Promise<Reply | Response>;
export type RouteHandler<P> = ((req: Request, ctx: { params: Promise<P> }) => Promise<Response>) & { core: RouteCore<P> };

export function route<A extends AuthLevel, P extends Record<string, string> = Record<string, string>>(
  opts: { auth: A },
  handler: (ctx: RouteContext<P, UserFor<A>>) => Promise<unknown>,
): RouteHandler<P> {
  const core: RouteCore<P> = async (req, params) => {
    const started = Date.now();
    const https = isHttps(req.url, req.headers);
    try {
      const caller = opts.auth === 'none' ? null : await resolveCaller(req.headers);
      if (opts.auth === 'none') slideSessionOf(req.headers); // a logged-in visitor reading public pages stays logged in
      authorize(opts.auth, caller);
      if (caller?.via === 'cookie') checkSameOrigin(req);
      const out = await handler({ req, params, user: (caller?.user ?? null) as UserFor<A>, caller, ip: clientIp(req.headers) });
      return out instanceof Response ? withApiSecurityHeaders(out, https) : secured({ status: 200, body: { data: out } }, https);
    } catch (err) {
      // The context is only read when the error is logged (5xx): no URL parse for a refusal.
      return secured(errorReply(err, () => ({ method: req.method, path: new URL(req.url).pathname, ms: Date.now() - started })), https);
    }
  };
  const nextHandler = async (req: Request, ctx: { params: Promise<P> }): Promise<Response> => {
    const out = await core(req, ((await ctx?.params) ?? {}) as P);
    return out instanceof Response ? out : toResponse(out);
  };
  return Object.assign(nextHandler, { core });
}

/** Both doors (Next and the hot server) send what the core returns, so the API's security headers go on here. */
function secured(reply: Reply, https: boolean): Reply {
  const base = apiSecurityHeaders({ https });
  return { ...reply, headers: reply.headers ? { ...base, ...reply.headers } : base };
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
 * Cookies ride along on cross-site requests; Bearer tokens do not. So a state change carried by
 * the cookie must come from our own origin (Origin header, or Sec-Fetch-Site from the browser).
 */
function checkSameOrigin(req: Request): void {
  if (SAFE_METHODS.has(req.method)) return;
  const origin = req.headers.get('origin');
  const host = req.headers.get('x-forwarded-host') ?? req.headers.get('host');
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
