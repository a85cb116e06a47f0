/**
 * Tests only: the hot server's door. A request for one of the hot routes is sent over real HTTP
 * (node:http, so Host and Origin go out exactly as the test wrote them) to an in-process hot
 * server — started once per test file on a free port, with a 404 fallback — and its answer comes
 * back as a web Response. Any other handler is left to the direct call (null).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { hotRoutes } from '@/app/api/hot-routes';
import { createHotServer } from '@/lib/hot/server';
import { writeReply } from '@/lib/hot/node-adapter';
import { PEER_HEADER } from '@/lib/http/client-ip';

let port: Promise<number> | undefined;
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function hotServerPort(): Promise<number> {
  port ??= new Promise((resolve) => {
    const server = createHotServer({
      routes: hotRoutes,
      maxInFlight: 100_000,
      fallback: (_req, res) => writeReply(res, { status: 404, body: { error: { code: 'NOT_FOUND', message: 'not a hot route' } } }),
    });
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
    server.unref();
  });
  return port;
}

/**
 * A test that stands in for many clients names each one in PEER_HEADER. Over HTTP the server
 * overwrites that header with the socket's address, so the door sends each named client from a
 * loopback source address of its own (127.0.0.0/8 all reaches this machine): distinct clients
 * really are distinct sockets, nothing is spoofed.
 */
function loopbackFor(client: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < client.length; i++) h = Math.imul(h ^ client.charCodeAt(i), 0x01000193) >>> 0;
  return `127.${(h >>> 16) & 0xff}.${(h >>> 8) & 0xff}.${(h % 253) + 2}`;
}

export async function throughHotServer(handler: unknown, req: Request, params: Record<string, string>): Promise<Response | null> {
  const route = hotRoutes.find((r) => r.handler === handler && r.method === req.method);
  if (!route) return null;
  // An empty path segment cannot name this route over HTTP (`/api/shops//vouchers` is another
  // path): such calls only exist for the direct handler.
  if (Object.values(params).some((v) => v === '')) return null;
  const path = route.path.replace(/\[(\w+)\]/g, (_, p: string) => encodeURIComponent(params[p] ?? ''));
  const headers: Record<string, string> = {};
  req.headers.forEach((v, k) => (headers[k] = v));
  const body = req.body ? Buffer.from(await req.arrayBuffer()) : undefined;
  if (body) headers['content-length'] = String(body.length);
  const client = headers[PEER_HEADER];
  delete headers[PEER_HEADER];
  const localAddress = client ? loopbackFor(client) : undefined;
  const target = { host: '127.0.0.1', port: await hotServerPort(), agent, localAddress, method: req.method, path: path + new URL(req.url).search, headers };
  return new Promise((resolve, reject) => {
    const out = http.request(target, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
        resolve(new Response(chunks.length ? Buffer.concat(chunks) : null, { status: res.statusCode, headers: h }));
      });
      res.on('error', reject);
    });
    out.on('error', reject);
    out.end(body);
  });
}
