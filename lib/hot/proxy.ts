/**
 * The fallback of a split web server (WEB_PART=split, docs/hot-server.md#the-split-server): every
 * request that is not a hot route is passed, as it came, to the Next process over a unix socket
 * only this host's processes can open, and its answer passed back as it streams. The hot process
 * never loads Next, so Next's AsyncLocalStorage never turns on node's promise hooks there: once
 * one Next request has run in a process, every promise in it pays them (measured ~0.05 → ~0.3 µs
 * per await in node 20), and the room's requests are made of promises.
 *
 * The request carries PEER_HEADER as the hot server wrote it (the socket's address, whatever the
 * client sent); Next's process listens on nothing else, so it believes that header.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { log } from '@/lib/log';
import { writeReply } from '@/lib/hot/node-adapter';
import { apiSecurityHeaders } from '@/lib/http/security-headers';

/** Headers of one connection, not of the request (RFC 9110 §7.6.1): never passed on. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

function passOn(headers: IncomingMessage['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  // A Connection header may name more headers of the hop.
  const named = new Set(String(headers.connection ?? '').toLowerCase().split(',').map((s) => s.trim()).filter(Boolean));
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || HOP_BY_HOP.has(k) || named.has(k)) continue;
    out[k] = v;
  }
  return out;
}

export interface NextUpstream {
  /** The unix socket Next's process listens on. */
  socketPath: string;
  /** Idle connections to it kept alive for the next requests (default 256). */
  maxFreeSockets?: number;
}

/** A fallback that passes each request to Next's process and its answer back (502 JSON when Next cannot be reached). */
export function proxyToNext(o: NextUpstream): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  // No cap on connections at once, as when Next ran in the web process itself: each is one of the
  // front's, which the hot server already bounds (per client, the request deadlines).
  const agent = new http.Agent({ keepAlive: true, maxFreeSockets: o.maxFreeSockets ?? 256 });
  return (req, res) =>
    new Promise<void>((resolve) => {
      const upstream = http.request({ socketPath: o.socketPath, agent, method: req.method, path: req.url, headers: passOn(req.headers) }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, passOn(answer.headers));
        answer.pipe(res);
        answer.once('end', resolve);
        answer.once('error', () => {
          res.destroy();
          resolve();
        });
      });
      upstream.once('error', (err) => {
        if (res.headersSent) res.destroy();
        else if (!res.writableEnded) {
          log.error({ err, path: req.url }, 'web server: Next is not answering');
          writeReply(res, { status: 502, body: { error: { code: 'BAD_GATEWAY', message: '服务暂不可用，请稍后再试' } }, headers: { ...apiSecurityHeaders({ https: false }), 'retry-after': '1' } });
        }
        resolve();
      });
      // The client left before the answer ended: stop Next's work on it too.
      res.once('close', () => {
        if (!res.writableFinished) upstream.destroy();
        resolve();
      });
      req.pipe(upstream);
    });
}
