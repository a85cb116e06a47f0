/**
 * Next's process of a split web server (WEB_PART=split, docs/hot-server.md#the-split-server),
 * started and kept by workers/web-server.ts: Next's request handler on the unix socket NEXT_SOCKET
 * (in a directory only this user can enter), reached only through the web processes, which pass
 * it every request that is not a hot route with the client's address in PEER_HEADER. Tells the
 * primary 'ready' once it listens.
 *
 * It stops when the primary lets go of it (the IPC channel closes: the primary stops it last, after
 * the web processes drained, or the primary died), finishing what is in flight. SIGTERM and SIGINT
 * are ignored while the primary is there: a Ctrl-C in a terminal, or a service manager signalling
 * the whole group, reaches this process together with the web processes, and stopping then would
 * answer 502 to the pages they are still passing on while they drain.
 */
import http from 'node:http';
import { rmSync, rmdirSync } from 'node:fs';
import path from 'node:path';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { deadlineOptions, writeReply } from '@/lib/hot/node-adapter';
import { errorReply } from '@/lib/http/respond';
import { nextHandler } from '@/workers/next-handler';

const socketPath = process.env.NEXT_SOCKET;
if (!socketPath) {
  console.error('✗ NEXT_SOCKET is not set: this process is started by workers/web-server.ts (WEB_PART=split)');
  process.exit(1);
}

let server: http.Server | null = null;
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(1), 10_000).unref();
  if (!server) process.exit(0); // still loading Next: nothing in flight
  server.close(() => process.exit(0));
  server.closeIdleConnections();
};
const onSignal = () => {
  if (!process.connected) stop();
};
// Before the (slow) load of Next: a primary gone meanwhile must not leave this process behind.
process.on('disconnect', stop);
process.on('SIGTERM', onSignal);
process.on('SIGINT', onSignal);
process.on('exit', () => {
  // Only once the primary has let go of it: the primary removes its directory on its way out, one
  // killed outright cannot, so the socket goes, and its directory if it is the primary's
  // (hmdp-next-*) and empty. A crash with the primary still there (an uncaught error) leaves both:
  // the next copy listens at the same path.
  if (process.connected) return;
  rmSync(socketPath, { force: true });
  const dir = path.dirname(socketPath);
  if (path.basename(dir).startsWith('hmdp-next-')) {
    try {
      rmdirSync(dir);
    } catch {
      // not empty, or gone already
    }
  }
});

const handle = await nextHandler();
if (stopping) process.exit(0);
// A socket file left by a process that died is in the way of listen (EADDRINUSE).
rmSync(socketPath, { force: true });
// The request deadlines are the front's (a proxy connection left mid-body ends as a client's
// would), checked as often as the front checks its own.
// requireHostHeader: false, as at the front: an HTTP/1.0 request without Host (a load balancer's
// health probe) reaches here as HTTP/1.1, which node would otherwise answer 400 itself.
server = http.createServer({ ...deadlineOptions(env.WEB_HEADERS_TIMEOUT_MS, env.WEB_REQUEST_TIMEOUT_MS), requireHostHeader: false }, (req, res) => {
  Promise.resolve(handle(req, res)).catch((err: unknown) => {
    log.error({ err, path: req.url }, "Next's process: request failed outside any handler");
    if (!res.headersSent) writeReply(res, errorReply(err));
    else res.destroy();
  });
});
// The web processes keep their connections to it alive (lib/hot/proxy.ts): never close them first.
server.keepAliveTimeout = 0;
server.listen(socketPath, () => process.send?.('ready'));
