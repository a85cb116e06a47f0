/**
 * The web server (`npm start`): a node:cluster primary that keeps WEB_CONCURRENCY processes, each
 * one node:http server on HOST:PORT answering the flash-sale hot routes itself (lib/hot), and, by
 * default (WEB_PART=split), one process of Next's own (workers/next-server.ts, on a unix socket in a
 * private directory) to which the web processes pass every other request (lib/hot/proxy.ts), so
 * Next's AsyncLocalStorage never slows the hot routes' promises (docs/hot-server.md#the-split-server).
 * WEB_PART=all: Next's request handler in each web process instead (shape (a)); WEB_PART=hot: the
 * hot routes only, Next never loaded (shape (b) of docs/hot-server.md#shape-a-and-shape-b: a front
 * such as nginx sends the rest elsewhere). SIGTERM/SIGINT: stop accepting, finish what is in
 * flight, close connections, exit; Next's process last.
 */
import cluster from 'node:cluster';
import { fork as forkProcess, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { env } from '@/lib/env';
import { AggregatorRegistry } from 'prom-client';
import { log } from '@/lib/log';
import { answerMetricsTo } from '@/lib/hot/primary-metrics';
import { SOCKET_DIR_PREFIX, socketDirProblem, sweepStaleSocketDirs } from '@/workers/socket-dir';
import { applyAcceptPolicy } from '@/workers/accept-policy';
import { answerListenCopies, COPIES_ENV, listenCopies } from '@/workers/listen-copies';

const processes = env.WEB_CONCURRENCY || availableParallelism();
const LISTEN_BACKLOG = 65535;
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
  const socketDir = env.WEB_PART === 'split' ? mkdtempSync(path.join(tmpdir(), SOCKET_DIR_PREFIX)) : null;
  // What servers killed outright with their Next (a SIGKILL to the whole group) left behind.
  if (socketDir) void sweepStaleSocketDirs(tmpdir()).then((gone) => gone.length && log.info({ gone }, "removed Next socket directories nobody listens on"));
  // One Redis write per event-loop turn (lib/redis/write-per-turn.ts) suits the web processes
  // (many concurrent requests), not the order worker.
  // A process accepting for itself takes in WEB_ACCEPTS_PER_TURN connections per turn of its loop
  // (workers/listen-copies.ts): the primary hands it that many handles on its socket, less its own.
  const fork = () => {
    const copies = accepting === 'none' ? Math.max(0, env.WEB_ACCEPTS_PER_TURN - 1) : 0;
    const worker = cluster.fork({ REDIS_AUTO_PIPELINING: 'true', [COPIES_ENV]: String(copies), ...(socketDir ? { NEXT_SOCKET: path.join(socketDir, 'next.sock') } : {}) });
    answerListenCopies(worker);
    return worker;
  };
  // Before the first fork: who accepts the connections (workers/accept-policy.ts).
  const accepting = applyAcceptPolicy(processes);
  for (let i = 0; i < processes; i++) fork();
  if (env.WEB_METRICS_PORT) void import('@/lib/hot/metrics').then((m) => m.serveClusterMetrics(env.WEB_METRICS_PORT, env.HOST));
  let listening = 0;
  // Pages can be served once a Next process has listened (always, without one of its own).
  let nextReady = env.WEB_PART !== 'split';
  let announced = false;
  const announce = () => {
    if (announced || listening < processes || !nextReady) return;
    announced = true;
    // One line the scripts and the harnesses wait for.
    console.log(
      `web server ready on http://${env.HOST}:${env.PORT} (${processes} process${processes > 1 ? 'es' : ''}${env.WEB_PART === 'split' ? ' + Next in its own' : ''}; ${accepting === 'none' ? 'accepting for itself' : 'the primary hands out connections'})`,
    );
  };
  cluster.on('listening', () => {
    ++listening;
    announce();
  });
  // WEB_PART=split: Next's process, kept like the web processes; its socket in a directory only
  // this user can enter (mkdtemp makes it 0700), removed on the way out.
  let nextProc: ChildProcess | null = null;
  // A copy that dies before it listens (the build replaced under a running server, a bad config)
  // is started again later and later: 0.5 s, doubling up to 30 s; once one listens, 0.5 s again.
  let nextRetryMs = 500;
  process.on('exit', () => socketDir && rmSync(socketDir, { recursive: true, force: true }));
  const startNext = () => {
    if (stopping) return;
    // The directory must still be ours alone: a local user who made one by that name while it was
    // gone would own the socket every page passes through.
    const unsafe = socketDirProblem(socketDir!);
    if (unsafe) {
      log.error({ dir: socketDir }, `Next's socket directory ${unsafe}; stopping`);
      stopCode = 1;
      stop('SIGTERM');
      return;
    }
    const proc = forkProcess(path.join(import.meta.dirname, 'next-server.ts'), [], { env: { ...process.env, NEXT_SOCKET: path.join(socketDir!, 'next.sock') } });
    let listened = false;
    nextProc = proc;
    // A failed fork (EAGAIN, ENOMEM) or a send to a process that just died: logged, never thrown
    // out of the primary (its 'exit' follows and restarts it).
    proc.on('error', (err) => log.error({ err }, "Next's process: error"));
    // The grabs are counted in the web processes; the console's pages, rendered there, ask here.
    if (clusterMetrics) answerMetricsTo(proc, clusterMetrics);
    proc.on('message', (m) => {
      if (m !== 'ready' || listened) return;
      listened = true;
      nextRetryMs = 500;
      nextReady = true;
      announce();
    });
    proc.on('exit', (code, signal) => {
      if (nextProc === proc) nextProc = null;
      if (stopping) {
        if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(stopCode);
        return;
      }
      if (!nextReady) {
        // None ever started (no build, a bad config): another copy would fail the same way.
        log.error({ code, signal }, "Next's process could not start; stopping");
        stopCode = 1;
        stop('SIGTERM');
        return;
      }
      const retryMs = listened ? 500 : nextRetryMs;
      if (!listened) nextRetryMs = Math.min(nextRetryMs * 2, 30_000);
      log.error({ code, signal, retryMs }, listened ? "Next's process died; starting another" : "Next's process died before it listened; starting another");
      setTimeout(startNext, retryMs);
    });
  };
  // Next's process ignores SIGTERM and SIGINT while this process is there (a signal to the whole
  // group must not stop it before the web processes drained): it stops when let go.
  const stopNext = () => {
    if (nextProc?.connected) nextProc.disconnect();
    else nextProc?.kill('SIGTERM');
  };
  // The web processes' metrics summed, for Next's process (lib/hot/primary-metrics.ts).
  let clusterMetrics: (() => Promise<string>) | null = null;
  if (socketDir) {
    const aggregator = new AggregatorRegistry();
    clusterMetrics = () => aggregator.clusterMetrics();
  }
  cluster.on('exit', (w, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length > 0) return;
      // Next's process last: requests still arriving on the web processes' kept-alive connections
      // while they drain may be for it.
      if (nextProc) stopNext();
      else process.exit(stopCode);
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
    // Not once stopping: a copy started then would get no SIGTERM and hold the stop (and Next's) until the hard exit.
    setTimeout(() => stopping || fork(), 500);
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'web server stopping');
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    setTimeout(() => {
      nextProc?.kill('SIGKILL');
      process.exit(1);
    }, 12_000).unref();
    if (Object.keys(cluster.workers ?? {}).length === 0) {
      if (nextProc) stopNext();
      else process.exit(stopCode);
    }
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // Last: starting it may call stop() (an unsafe directory).
  if (socketDir) startNext();
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
  // The primary sums the processes' metrics for the metrics port and for Next's process of a split server.
  if (env.WEB_METRICS_PORT || env.WEB_PART === 'split') answerClusterMetrics();
  const fallback =
    env.WEB_PART === 'hot'
      ? (await import('@/workers/hot-only')).hotOnlyFallback
      : env.WEB_PART === 'split'
        ? (await import('@/lib/hot/proxy')).proxyToNext({ socketPath: process.env.NEXT_SOCKET ?? '' })
        : await (await import('@/workers/next-handler')).nextHandler();
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
  // More than one connection per turn of the loop for a process accepting for itself (workers/listen-copies.ts).
  let copies: import('node:net').Server[] = [];
  server.once('listening', () => (copies = listenCopies(server, Number(process.env[COPIES_ENV] ?? 0), LISTEN_BACKLOG).made));

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    const hardExit = setTimeout(() => process.exit(1), 10_000);
    hardExit.unref();
    // The copies stop accepting too (their connections count as the server's own, so its close
    // waits for them all).
    for (const c of copies) c.close();
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

