/**
 * Next's process of a split web server (WEB_PART=split, docs/hot-server.md#the-split-server),
 * started and kept by workers/web-server.ts: Next's request handler on the unix socket NEXT_SOCKET
 * (in a directory only this user can enter), reached only through the web processes, which pass
 * it every request that is not a hot route with the client's address in PEER_HEADER. Tells the
 * primary 'ready' once it listens. SIGTERM/SIGINT: stop accepting, finish what is in flight, exit.
 */
import http from 'node:http';
import { rmSync } from 'node:fs';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { writeReply } from '@/lib/hot/node-adapter';
import { errorReply } from '@/lib/http/respond';
import { nextHandler } from '@/workers/next-handler';

const socketPath = process.env.NEXT_SOCKET;
if (!socketPath) {
  console.error('✗ NEXT_SOCKET is not set: this process is started by workers/web-server.ts (WEB_PART=split)');
  process.exit(1);
}
const handle = await nextHandler();
// A socket file left by a process that died is in the way of listen (EADDRINUSE).
rmSync(socketPath, { force: true });
const server = http.createServer((req, res) => {
  Promise.resolve(handle(req, res)).catch((err: unknown) => {
    log.error({ err, path: req.url }, "Next's process: request failed outside any handler");
    if (!res.headersSent) writeReply(res, errorReply(err));
    else res.destroy();
  });
});
// The web processes keep their connections to it alive (lib/hot/proxy.ts): never close them first.
server.keepAliveTimeout = 0;
// A request that stops half-way (a proxy connection left mid-body) ends by the same deadlines as
// at the front.
if (env.WEB_HEADERS_TIMEOUT_MS > 0) server.headersTimeout = env.WEB_HEADERS_TIMEOUT_MS;
if (env.WEB_REQUEST_TIMEOUT_MS > 0) server.requestTimeout = env.WEB_REQUEST_TIMEOUT_MS;
server.listen(socketPath, () => process.send?.('ready'));

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(1), 10_000).unref();
  server.close(() => process.exit(0));
  server.closeIdleConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// The primary gone (killed outright): nobody can reach this socket any more.
process.on('disconnect', stop);
