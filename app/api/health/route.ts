import { checkHealth, publicHealth, type Health } from '@/lib/health';
import { resolveCaller } from '@/lib/auth/resolve';
import { isHttps, withApiSecurityHeaders } from '@/lib/http/security-headers';

export const dynamic = 'force-dynamic';

/**
 * One check at a time per process, and its result reused for CHECK_REUSE_MS: the route is public
 * and each check costs MySQL, Redis (INFO, CONFIG GET) and a RabbitMQ channel, so a flood of health
 * requests costs the box one check a second, not one per request.
 */
const CHECK_REUSE_MS = 1000;
let lastCheck: { at: number; health: Promise<Health> } | null = null;

function sharedCheck(): Promise<Health> {
  const now = Date.now();
  if (lastCheck === null || now - lastCheck.at >= CHECK_REUSE_MS) {
    const health = checkHealth();
    lastCheck = { at: now, health };
    // A check that fails outright is not reused.
    health.catch(() => {
      if (lastCheck?.health === health) lastCheck = null;
    });
  }
  return lastCheck.health;
}

/**
 * An admin's session (Bearer or cookie) sees the whole report; anyone else only what a load
 * balancer needs (up or down, per dependency). A caller that cannot be resolved (Redis is down,
 * the token is junk) is a stranger: health answers all the same.
 */
async function isAdmin(req: Request | undefined): Promise<boolean> {
  if (!req) return false;
  try {
    return (await resolveCaller(req.headers))?.user.role === 'admin';
  } catch {
    return false;
  }
}

/** Not a route() handler (its 503 carries the health report too), so the API's security headers go on here. */
export async function GET(req?: Request): Promise<Response> {
  const https = req ? isHttps(req.url, req.headers) : false;
  const [full, admin] = await Promise.all([sharedCheck(), isAdmin(req)]);
  const health = admin ? full : publicHealth(full);
  if (health.ok) return withApiSecurityHeaders(Response.json({ data: health }), https);
  return withApiSecurityHeaders(
    Response.json({ error: { code: 'SERVICE_UNAVAILABLE', message: `依赖不可用: ${health.down.join(', ')}` }, data: health }, { status: 503 }),
    https,
  );
}
