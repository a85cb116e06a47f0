import { checkHealth } from '@/lib/health';
import { isHttps, withApiSecurityHeaders } from '@/lib/http/security-headers';

export const dynamic = 'force-dynamic';

/** Not a route() handler (its 503 carries the health report too), so the API's security headers go on here. */
export async function GET(req?: Request): Promise<Response> {
  const https = req ? isHttps(req.url, req.headers) : false;
  const health = await checkHealth();
  if (health.ok) return withApiSecurityHeaders(Response.json({ data: health }), https);
  return withApiSecurityHeaders(
    Response.json({ error: { code: 'SERVICE_UNAVAILABLE', message: `依赖不可用: ${health.down.join(', ')}` }, data: health }, { status: 503 }),
    https,
  );
}
