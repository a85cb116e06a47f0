/**
 * GET /api/bench/constant?bytes=N — the benchmark's baseline: a bare handler answering constant
 * JSON of N bytes (no auth wrapper, no Redis, no DB), to compare the cached shop route against.
 * Off in production unless the bench preloaded its hook into the server (e2e/bench/hooks/bench-routes.mjs):
 * a process-wide flag, not a setting of the product.
 */
import { isProduction } from '@/lib/env';

export const dynamic = 'force-dynamic';

const EMPTY = '{"data":{"pad":""}}';
const bodies = new Map<number, string>();

export async function GET(req: Request): Promise<Response> {
  if (isProduction && !(globalThis as { __hmdpBenchRoutes?: boolean }).__hmdpBenchRoutes) return Response.json({ error: { code: 'NOT_FOUND', message: '页面不存在' } }, { status: 404 });
  const asked = Number(new URL(req.url).searchParams.get('bytes'));
  const bytes = Number.isInteger(asked) ? Math.min(Math.max(asked, EMPTY.length), 65_536) : 512;
  let body = bodies.get(bytes);
  if (!body) {
    body = `{"data":{"pad":"${'x'.repeat(bytes - EMPTY.length)}"}}`;
    if (bodies.size < 64) bodies.set(bytes, body);
  }
  return new Response(body, { headers: { 'content-type': 'application/json' } });
}
