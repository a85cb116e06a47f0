/**
 * The fallback of a hot-only web server (WEB_PART=hot, shape (b) of docs/hot-server.md#shape-a-and-shape-b): Next is
 * not loaded in the process, a front in the same origin sends it the hot routes only. It still
 * answers the health check (load balancers and the harnesses ask it), and 404 JSON to anything
 * else, which only a misrouted request can reach.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GET as health } from '@/app/api/health/route';
import { toWebRequest, writeReply, writeResponse } from '@/lib/hot/node-adapter';
import { apiSecurityHeaders } from '@/lib/http/security-headers';

export async function hotOnlyFallback(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/api/health' && (req.method === 'GET' || req.method === 'HEAD')) return writeResponse(res, await health(toWebRequest(req, null)));
  writeReply(res, { status: 404, body: { error: { code: 'NOT_FOUND', message: '此服务只处理抢购热点接口' } }, headers: apiSecurityHeaders({ https: false }) });
}
