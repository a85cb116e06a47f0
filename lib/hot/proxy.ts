/**
 * The fallback of a split web server (WEB_PART=split, docs/hot-server.md#the-split-server): every
 * request that is not a hot route is passed to the Next process over a unix socket only this
 * host's user can open, and its answer passed back as it streams. The hot process never loads
 * Next, so Next's AsyncLocalStorage never turns on node's promise hooks there: once one Next
 * request has run in a process, every promise in it pays them (measured ~0.05 → ~0.3 µs per await
 * in node 20), and the room's requests are made of promises.
 *
 * Next's process believes PEER_HEADER (the client's address, for rate limits and the trusted-proxy
 * rule), so what reaches it is framed and named here, never by the client: the header is set from
 * the one the hot server wrote (the socket's address, whatever the client sent), a body goes on
 * with its length or chunked (a client's own framing is the hop's: without this a body on a GET
 * went on unframed and Next read it as a second request, headers of the client's choosing), a
 * Connection header's list is ignored, and a request without Host goes on without one.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { log } from '@/lib/log';
import { writeReply } from '@/lib/hot/node-adapter';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { apiSecurityHeaders } from '@/lib/http/security-headers';

/**
 * Headers of one connection, not of the message (RFC 9110 §7.6.1): never passed on. A Connection
 * header may name more, which a proxy should drop too; here its list is ignored, because everything
 * it could name (the body's length, the host, the peer, x-forwarded-*) is something Next relies on
 * and nothing a client needs to take away.
 */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

function endToEnd(headers: IncomingMessage['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

/** The headers Next's process gets: end to end, the peer as the hot server wrote it, the body framed. */
function upstreamHeaders(req: IncomingMessage): Record<string, string | string[]> {
  const out = endToEnd(req.headers);
  out[PEER_HEADER] = String(req.headers[PEER_HEADER] ?? '');
  // node's parser took the client's chunks apart (and refuses a request with both framings): a
  // chunked body goes on chunked, one with a length keeps it, none has none.
  if (req.headers['transfer-encoding'] !== undefined) {
    delete out['content-length'];
    out['transfer-encoding'] = 'chunked';
  } else if (out['content-length'] === undefined && req.method !== 'GET' && req.method !== 'HEAD') {
    // No body: said so. The headers go before the body is known (flushHeaders), and node would
    // frame a POST, PUT or PATCH without a length as chunked: Next would read a body there.
    out['content-length'] = '0';
  }
  return out;
}

export interface NextUpstream {
  /** The unix socket Next's process listens on. */
  socketPath: string;
  /** Idle connections to it kept alive for the next requests (default 256). */
  maxFreeSockets?: number;
}

const BAD_GATEWAY = { status: 502, body: { error: { code: 'BAD_GATEWAY', message: '服务暂不可用，请稍后再试' } } };

/** A fallback that passes each request to Next's process and its answer back (502 JSON when Next cannot be reached). */
export function proxyToNext(o: NextUpstream): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  // No cap on connections at once, as when Next ran in the web process itself: each is one of the
  // front's, which the hot server already bounds (per client, the request deadlines).
  const agent = new http.Agent({ keepAlive: true, maxFreeSockets: o.maxFreeSockets ?? 256 });
  return (req, res) =>
    new Promise<void>((resolve) => {
      let clientGone = false;
      // setHost: false: the client's Host or none (HTTP/1.0), never one made up here ('localhost').
      const upstream = http.request({ socketPath: o.socketPath, agent, method: req.method, path: req.url, headers: upstreamHeaders(req), setHost: false }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.headers));
        answer.pipe(res);
        answer.once('end', resolve);
        answer.once('error', () => {
          res.destroy();
          resolve();
        });
      });
      upstream.once('error', (err) => {
        resolve();
        if (clientGone) return; // our own destroy() below: nobody to answer, nothing wrong upstream
        if (res.headersSent) return void res.destroy();
        log.error({ err, path: req.url }, 'web server: Next is not answering');
        writeReply(res, { ...BAD_GATEWAY, headers: { ...apiSecurityHeaders({ https: false }), 'retry-after': '1' } });
      });
      res.once('close', () => {
        // The client left before the answer ended, or the answer ended before the request's body
        // had gone on (an early 413 or 401: the hot server stops reading such a body): either way
        // this upstream connection is mid-message, never to be reused. Without this it stayed open
        // until Next's request deadline.
        if (!res.writableFinished || !req.complete) {
          clientGone = true;
          upstream.destroy();
        }
        resolve();
      });
      // The headers go now, not with the first byte of the body: a slow uploader's request is then
      // Next's from its first moment (its header deadline met, never counted idle on a shutdown).
      upstream.flushHeaders();
      req.pipe(upstream);
    });
}
