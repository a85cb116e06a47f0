import { env } from '@/lib/env';
import type { Fallback } from '@/lib/hot/server';

/**
 * Next's request handler, for everything that is not a hot route: in Next's own process
 * (workers/next-server.ts, WEB_PART=split, the default) or in each web process (WEB_PART=all).
 *
 * Under /api/ the API's security headers are set before Next runs: Next answers some API requests
 * itself, with no code of ours in between — 405 to a method the route file does not export, 204 to
 * OPTIONS, its HTML 404 to a path no route file serves — and those went out without nosniff, CSP
 * or frame-ancestors (proxy.ts covers pages only). A route's own answer carries the same headers
 * (lib/http/route.ts); Next copies a response header only when none of that name is set yet
 * (next/dist/server/send-response.js), so each goes out once.
 */
export async function nextHandler(): Promise<Fallback> {
  const [{ default: next }, { apiSecurityHeaders, forwardedHttps }] = await Promise.all([import('next'), import('@/lib/http/security-headers')]);
  const app = next({ dev: false, dir: process.cwd(), hostname: env.HOST, port: env.PORT });
  const handle = app.getRequestHandler();
  await app.prepare();
  return (req, res) => {
    if (req.url?.startsWith('/api/')) {
      const headers = apiSecurityHeaders({ https: forwardedHttps(req.headers['x-forwarded-proto']) });
      for (const name in headers) res.setHeader(name, headers[name]!);
    }
    return handle(req, res);
  };
}
