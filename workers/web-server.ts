/**
 * The web server (`npm start`): a node:cluster primary that keeps WEB_CONCURRENCY processes, each
 * one node:http server on HOST:PORT answering the flash-sale hot routes itself (lib/hot) and
 * handing every other request to Next's request handler. SIGTERM/SIGINT: stop accepting, finish
 * what is in flight, close connections, exit. WEB_PART=hot: the hot routes only, Next never loaded
 * (shape (b) of docs/hot-server.md#shape-a-and-shape-b: a front such as nginx sends the rest elsewhere).
 */
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import type { Fallback } from '@/lib/hot/server';

const processes = env.WEB_CONCURRENCY || availableParallelism();
const LISTEN_BACKLOG = 4096;
/** A web process's exit code when it could not listen (EX_CONFIG): the primary stops instead of starting another. */
const CANNOT_LISTEN = 78;

if (cluster.isPrimary) {
  await refuseUnsafeListen();
  runPrimary();
} else {
  await runWorker();
}

/** A demo install (published passwords, the dev SMS provider) never listens beyond loopback. */
async function refuseUnsafeListen(): Promise<void> {
  const [{ db, closeDb }, { unsafeListenReason }] = await Promise.all([import('@/lib/db/client'), import('@/lib/seed/listen-guard')]);
  const refusal = await unsafeListenReason(db, env.HOST, env.SMS_PROVIDER === 'dev' && env.ALLOW_DEV_SMS_IN_PRODUCTION);
  await closeDb();
  if (refusal) {
    console.error(`✗ ${refusal}`);
    process.exit(1);
  }
}

function runPrimary(): void {
  let stopping = false;
  let stopCode = 0;
  // One Redis write per event-loop turn (lib/redis/write-per-turn.ts) suits the web processes
  // (many concurrent requests), not the order worker.
  const fork = () => cluster.fork({ REDIS_AUTO_PIPELINING: 'true' });
  for (let i = 0; i < processes; i++) fork();
  if (env.WEB_METRICS_PORT) void import('@/lib/hot/metrics').then((m) => m.serveClusterMetrics(env.WEB_METRICS_PORT, env.HOST));
  let listening = 0;
  cluster.on('listening', () => {
    if (++listening === processes) {
      // One line the scripts and the harnesses wait for.
      console.log(`web server ready on http://${env.HOST}:${env.PORT} (${processes} process${processes > 1 ? 'es' : ''})`);
    }
  });
  cluster.on('exit', (w, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(stopCode);
      return;
    }
    if (code === CANNOT_LISTEN) {
      // Another copy would fail the same way (port taken, address not on this host), every 500 ms
      // for ever, and the server would never be ready: stop, the web process said why.
      stopCode = 1;
      stop('SIGTERM');
      return;
    }
    log.error({ pid: w.process.pid, code, signal }, 'web process died; starting another');
    setTimeout(fork, 500);
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'web server stopping');
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    setTimeout(() => process.exit(1), 12_000).unref();
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(stopCode);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

async function runWorker(): Promise<void> {
  const [{ createHotServer }, { AdmissionLimit, setProcessAdmission }, { observeHotRoute, answerClusterMetrics }, { hotRoutes }, { closeDb }, { closeRedis, redis }, { closeMq }, { grabShed }] = await Promise.all([
    import('@/lib/hot/server'),
    import('@/lib/hot/admission-limit'),
    import('@/lib/hot/metrics'),
    import('@/app/api/hot-routes'),
    import('@/lib/db/client'),
    import('@/lib/redis/client'),
    import('@/lib/mq/connection'),
    import('@/lib/seckill/room/auto-open'),
  ]);
  if (env.WEB_METRICS_PORT) answerClusterMetrics();
  const fallback = env.WEB_PART === 'hot' ? (await import('@/workers/hot-only')).hotOnlyFallback : await nextHandler();
  const admission = new AdmissionLimit({ max: env.HOT_MAX_IN_FLIGHT, adaptive: env.HOT_ADMISSION === 'adaptive', min: env.HOT_MIN_IN_FLIGHT, trace: env.HOT_ADMISSION_TRACE });
  setProcessAdmission(admission); // read by /metrics and the console
  // An ordinary sale whose grabs this process sheds opens its waiting room (docs/fair-sale.md#opening-by-itself).
  const onShed = (route: string, params: Record<string, string>) => route === 'grab' && grabShed(redis, params.voucherId);
  const server = createHotServer({ routes: hotRoutes, fallback, admission, observe: observeHotRoute, onShed });
  // Without an 'error' listener a failed listen (EADDRINUSE, EADDRNOTAVAIL, EACCES) threw out of
  // the process, and the primary started another copy that failed the same way, for ever.
  // A listening server's own errors (an accept that failed for a reason libuv does not absorb: it
  // sheds EMFILE/ENFILE itself, closing the connections it cannot take) are logged, at most one
  // line per 10 s with the count since, and the server keeps serving.
  let errorLoggedAt = 0;
  let errorsSince = 0;
  let listening = false;
  server.once('listening', () => (listening = true));
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (!listening) {
      log.error({ err, host: env.HOST, port: env.PORT }, `web server cannot listen on ${env.HOST}:${env.PORT} (${err.code ?? err.message})`);
      process.exit(CANNOT_LISTEN);
    }
    errorsSince++;
    if (Date.now() - errorLoggedAt < 10_000) return;
    log.error({ err, count: errorsSince }, 'web server error; still serving');
    errorLoggedAt = Date.now();
    errorsSince = 0;
  });
  // A spike opens many connections at once; node's default backlog is 511 (the kernel caps it at
  // net.core.somaxconn). Headroom only: the 1000-connection spike measured the same either way.
  server.listen({ port: env.PORT, host: env.HOST, backlog: LISTEN_BACKLOG });

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    const hardExit = setTimeout(() => process.exit(1), 10_000);
    hardExit.unref();
    await new Promise((r) => {
      server.close(r);
      server.closeIdleConnections();
    });
    await Promise.all([closeDb(), closeRedis(), closeMq()]).catch(() => {});
    process.exit(0);
  };
  // The primary relays the signal; a Ctrl-C in a terminal reaches every process of the group.
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

/**
 * Next's request handler, for everything that is not a hot route (WEB_PART=all, the default).
 *
 * Under /api/ the API's security headers are set before Next runs: Next answers some API requests
 * itself, with no code of ours in between — 405 to a method the route file does not export, 204 to
 * OPTIONS, its HTML 404 to a path no route file serves — and those went out without nosniff, CSP
 * or frame-ancestors (proxy.ts covers pages only). A route's own answer carries the same headers
 * (lib/http/route.ts); Next copies a response header only when none of that name is set yet
 * (next/dist/server/send-response.js), so each goes out once.
 */
async function nextHandler(): Promise<Fallback> {
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
