/**
 * The grab at full speed, driven by wrk (e2e/bench/wrk.ts), with its reference points measured in
 * the same run: the ceiling (bare node:http constant route, same process count) and the DB strategy
 * (the grab as one synchronous MySQL transaction). Variants:
 *   accept  stock = users, each user grabs once: every grab accepted, published, persisted
 *   storm   1000 users rotate on a voucher of small stock (1000× more requests than stock)
 *   spike   50 000 distinct users, one grab each, all at once: time until every one is answered
 * --rate R runs the product open loop at R req/s (the harness's generator) instead of wrk.
 * Every run ends on the drain: oversold = duplicates = lost = 0, invariants hold.
 * Options: --processes P (web processes; default the product's WEB_CONCURRENCY), --no-db, --users, --stock,
 * --shape b (the hot routes on a hot-only server behind an nginx front, docs/hot-server.md#shape-a-and-shape-b),
 * --shape hot (that hot-only server alone, no front: what loading Next costs the hot routes),
 * --room (the voucher is a merchant's room sale: every user holds a valid one-time grab token minted
 * for them, as the token route would after admission, and sends it with every request; replays are
 * refused TOKEN_USED, then SOLD_OUT from refusal memory; the ceiling gets the same URLs; no DB strategy),
 * --profile DIR (a V8 CPU profile of each web process into DIR, of the order worker into DIR/worker;
 * read them with e2e/bench/profile-top.ts).
 */
import { availableParallelism } from 'node:os';
import { db } from '@/lib/db/client';
import { env } from '@/lib/env';
import { redis } from '@/lib/redis/client';
import { readSeckillState } from '@/lib/seckill/state';
import { createTestUsers, createTestVoucher, waitFor } from '@/e2e/support/fixtures/seckill';
import { createRoomVoucher } from '@/e2e/support/fixtures/room';
import { issueGrabToken } from '@/lib/seckill/room/tokens';
import { expectFreshVoucher, prepareBenchDb, purgeOrderQueue, round, verifySale, waitForDrain } from '../setup';
import type { BenchArgs, Scenario } from '../types';
import type { Harness } from '../harness';
import { formatBreakdown, runWrk, serversCpuSeconds, type WrkResult } from '../wrk';
import { scriptCallsPerMaster, spreadBetween } from '../cluster-stats';

const defaults: Record<string, { users: number; stock: (users: number) => number; once: boolean }> = {
  accept: { users: 40_000, stock: (u) => u, once: true },
  storm: { users: 1000, stock: () => 100, once: false },
  spike: { users: 50_000, stock: () => 1000, once: true },
};

/** Accepted grabs of the accept variant's warm-up (on a voucher of its own). */
const ACCEPT_WARMUP_GRABS = 10_000;

const fmt = (r: WrkResult) =>
  `${r.requests} req in ${round(r.durationS, 2)} s · ${Math.round(r.rps)} req/s · p50 ${round(r.p50Ms, 2)} ms, p99 ${round(r.p99Ms, 2)} ms${Number.isFinite(r.maxMs) ? `, max ${round(r.maxMs)} ms` : ''} · ` +
  `${Object.entries(r.statuses).map(([k, v]) => `${k}×${v}`).join(' ')}${r.errors ? ` · ${r.errors} socket errors` : ''} · ${Number.isFinite(r.generatorShare) ? `wrk CPU ${Math.round(r.generatorShare * 100)} % of the machine (busy ${Math.round(r.machineBusy * 100)} %)` : 'generator: the harness\'s Node open loop'}` +
  (Number.isFinite(r.serverCpuUsPerRequest) ? ` · server CPU ${round(r.serverCpuUsPerRequest, 1)} µs/req` : '');

async function storm(h: Harness, a: BenchArgs, url: string, tokens: string[], once: boolean, serverPids: number[] = [], queries?: string[]): Promise<WrkResult> {
  if (a.rate) {
    if (queries) throw new Error('--rate with --room: the open-loop generator sends no grab tokens');
    const path = new URL(url).pathname;
    const cpuBefore = serversCpuSeconds(serverPids);
    const s = await h.storm({ label: 'open loop', url: new URL(url).origin, path, method: 'POST', tokens, connections: a.connections, durationS: a.duration, rate: a.rate });
    return { requests: s.requests, durationS: s.durationS, rps: s.rps, p50Ms: s.p50Ms, p99Ms: s.p99Ms, maxMs: NaN, errors: s.errors, statuses: s.statuses, generatorCpuS: NaN, generatorShare: NaN, machineBusy: NaN, breakdown: [], serverCpuUsPerRequest: ((serversCpuSeconds(serverPids) - cpuBefore) * 1e6) / s.requests };
  }
  return runWrk({ url, tokens, queries, connections: a.connections, durationS: once ? Math.max(a.duration, 60) : a.duration, once, serverPids });
}

/** Per user, a valid one-time grab token for the room sale, as `g=<token>` (what POST …/room/token mints after admission). */
function grabTokenQueries(voucherId: string, userIds: string[]): string[] {
  return userIds.map((u) => `g=${issueGrabToken(voucherId, u, 30 * 60_000).token}`);
}

export const scenario: Scenario = {
  description: 'the grab on the hot server (wrk), beside the bare node:http ceiling and the DB strategy; verified drain',
  variants: ['accept', 'storm', 'spike'],
  async run(h, a, variant) {
    const d = defaults[variant]!;
    const users = a.extra.users ? a.users : d.users;
    const stock = a.extra.stock ? a.stock : d.stock(users);
    // The product's own default (lib/env.ts; 0 = one per core) unless told otherwise.
    const processes = Number(a.extra.processes ?? env.WEB_CONCURRENCY) || availableParallelism();
    await prepareBenchDb();
    await purgeOrderQueue();
    const line = h.progress('users');
    line(`creating ${users} users with sessions`);
    const created = await createTestUsers(db, redis, users);
    const tokens = created.map((u) => u.token);
    const userIds = created.map((u) => u.userId);
    line(`${users} users`, true);
    // --room: a gated sale, every user sends their own grab token (docs/benchmarks.md#a-gated-storm-grab-storm---room).
    const room = process.argv.includes('--room');
    const shapeB = a.extra.shape === 'b';
    // `hot`: the hot-only server without a front, only to measure what Next costs the hot routes.
    const hotOnly = a.extra.shape === 'hot';
    const summary: string[] = [`grab ${variant}: ${users} users, stock ${stock}, ${a.connections} connections, ${processes} web process(es)${shapeB ? ' (shape b: hot-only behind nginx)' : hotOnly ? ' (hot-only, no front)' : ''}, ${a.workers} worker(s)${room ? '; a room sale, each user sending their own one-time grab token' : ''}`];

    const ceiling = await h.startCeiling(processes);
    // Open loop (--rate): the ceiling is driven by the same generator at the same rate, so its
    // latency is the generator's own floor (it is Node, on the same cores).
    // The room's tokens name a voucher that does not exist yet: the ceiling only needs URLs of the same size.
    const ceilingQueries = room ? grabTokenQueries('1000000', userIds) : undefined;
    const top = a.rate
      ? await storm(h, a, `${ceiling.url}/ceiling`, tokens, false, [ceiling.proc.child.pid!])
      : await runWrk({ url: `${ceiling.url}/ceiling`, tokens, queries: ceilingQueries, connections: a.connections, durationS: d.once ? 60 : a.duration, once: d.once, serverPids: [ceiling.proc.child.pid!] });
    await h.stop(ceiling.proc);
    summary.push(`  ceiling (bare node:http): ${fmt(top)}`);

    const profile = a.extra.profile ? ['--cpu-prof', `--cpu-prof-dir=${a.extra.profile}`] : [];
    // Shape (b): a hot-only web server (Next not loaded) behind an nginx front with as many workers;
    // the front's CPU counts as the server's. Default (a): one server, hot routes + Next.
    const web = await h.startWeb({ WEB_CONCURRENCY: String(processes), ...(shapeB ? { WEB_PART: 'hot', TRUSTED_PROXIES: '1' } : hotOnly ? { WEB_PART: 'hot' } : {}) }, profile);
    const webPort = Number(new URL(web.url).port);
    const front = shapeB ? await h.startFront(webPort, webPort, processes) : null;
    const entry = front?.url ?? web.url;
    const serverPids = [web.proc.child.pid!, ...(front ? [front.proc.child.pid!] : [])];
    const workers = await h.startWorkers(a.workers, {}, a.extra.profile ? ['--cpu-prof', `--cpu-prof-dir=${a.extra.profile}/worker`] : []);
    // Warm-up, so the measured run finds the code it runs compiled (V8 optimizes a function after
    // enough calls, in helper threads that take CPU from everything else on 2 cores): the refusal
    // path for storm and spike; for accept the accepted path end to end (session, script, batched
    // publish and confirm, the worker's batch), drained before the measured run starts.
    const acceptWarm = variant === 'accept' ? Math.min(ACCEPT_WARMUP_GRABS, users) : 0;
    const warm = room ? await createRoomVoucher(db, redis, { stock: acceptWarm || 1, powCost: 1000 }) : await createTestVoucher(db, redis, { stock: acceptWarm || 1, title: 'bench warm-up' });
    const warmUsers = acceptWarm || 1000;
    await runWrk({ url: `${entry}/api/seckill/${warm}`, tokens: tokens.slice(0, warmUsers), queries: room ? grabTokenQueries(warm, userIds.slice(0, warmUsers)) : undefined, connections: a.connections, durationS: acceptWarm ? 30 : 2, once: acceptWarm > 0 });
    if (acceptWarm) await waitFor('the warm-up drain', async () => (await readSeckillState(redis, warm))?.pending === 0, 60_000, 100);
    // --buckets N: the measured voucher spread over N stock buckets (docs/buckets.md); on a Redis
    // Cluster (REDIS_CLUSTER_NODES) the scripts each master ran are reported below.
    const buckets = Number(a.extra.buckets ?? 1);
    if (room && buckets > 1) throw new Error('--room with --buckets: not measured (a room sale on one bucket only)');
    const voucherId = room ? await createRoomVoucher(db, redis, { stock, powCost: 1000 }) : await createTestVoucher(db, redis, { stock, title: `bench grab ${variant}`, buckets });
    await expectFreshVoucher(voucherId, stock);
    const queries = room ? grabTokenQueries(voucherId, userIds) : undefined;
    const workerPids = workers.map((w) => w.child.pid!);
    const workerCpuBefore = serversCpuSeconds(workerPids);
    const scriptsBefore = await scriptCallsPerMaster(redis);
    const hot = await storm(h, a, `${entry}/api/seckill/${voucherId}`, tokens, d.once, serverPids, queries);
    const scriptsAfter = await scriptCallsPerMaster(redis);
    const drainS = await waitForDrain(voucherId, Date.now());
    // The worker's CPU from the storm's start to the end of the drain: every order it wrote.
    const workerCpuS = serversCpuSeconds(workerPids) - workerCpuBefore;
    await h.stopAll();
    const accepted = hot.statuses['200'] ?? 0;
    const { orders, oversold, duplicates, lost, violations } = await verifySale(voucherId, stock, accepted);
    const fivexx = Object.entries(hot.statuses).filter(([k]) => k.startsWith('5')).reduce((n, [, v]) => n + v, 0);
    summary.push(`  hot server: ${fmt(hot)}`);
    if (hot.breakdown.length) summary.push(`  the machine's CPU per request (µs): ${formatBreakdown(hot.breakdown)}`);
    summary.push(`  accepted ${accepted} (${Math.round(accepted / hot.durationS)}/s) · DB orders ${orders} · oversold ${oversold} · duplicates ${duplicates} · lost ${lost} · drain ${round(drainS, 2)} s · worker CPU ${accepted ? round((workerCpuS * 1e6) / accepted, 1) : '–'} µs/order · invariants ${violations.length ? 'VIOLATED' : 'hold'}`);
    summary.push(`  ratio to the ceiling ×${round(hot.rps / top.rps, 2)}`);
    const spread = spreadBetween(scriptsBefore, scriptsAfter);
    if (spread.perNode.length) {
      summary.push(`  scripts per master during the storm (${buckets} bucket(s)): ${spread.perNode.map(([k, v]) => `${k} ${v}`).join(' · ')} · largest deviation from the mean ${Math.round(spread.maxDeviation * 100)} %`);
    }

    let dbRps: number | null = null;
    if (variant !== 'spike' && !room && !process.argv.includes('--no-db')) {
      const dbWeb = await h.startWeb({ ...h.hooks('grab-in-db'), WEB_CONCURRENCY: String(processes) });
      const dbVoucher = await createTestVoucher(db, redis, { stock, preheat: false, title: `bench grab db ${variant}` });
      const base = await runWrk({ url: `${dbWeb.url}/api/seckill/${dbVoucher}`, tokens, connections: a.connections, durationS: a.duration, serverPids: [dbWeb.proc.child.pid!] });
      await h.stop(dbWeb.proc);
      dbRps = base.rps;
      summary.push(`  DB strategy (seeds): ${fmt(base)}`);
      summary.push(`  ratio to the DB strategy ×${round(hot.rps / base.rps, 2)}`);
    }
    const failures = [
      ...(oversold ? [`oversold ${oversold}`] : []),
      ...(duplicates ? [`duplicates ${duplicates}`] : []),
      ...(lost ? [`lost ${lost}`] : []),
      ...(variant === 'spike' && fivexx ? [`${fivexx} answers 5xx`] : []),
      ...violations,
    ];
    return {
      line: {
        scenario: 'grab', variant, ...(room ? { room: true } : {}), users, stock, processes, requests: hot.requests, rps: round(hot.rps), accepted, accepted_per_s: round(accepted / hot.durationS),
        p50_ms: round(hot.p50Ms, 2), p99_ms: round(hot.p99Ms, 2), max_ms: round(hot.maxMs), statuses: hot.statuses, ceiling_rps: round(top.rps), db_rps: dbRps && round(dbRps),
        generator_share: round(hot.generatorShare, 2), oversold, duplicates, lost, drain_s: round(drainS, 2),
        ...(buckets > 1 ? { buckets } : {}), ...(spread.perNode.length ? { scripts_per_master: Object.fromEntries(spread.perNode), script_spread: round(spread.maxDeviation, 3) } : {}),
      },
      rps: hot.rps,
      p99Ms: hot.p99Ms,
      failures,
      summary,
    };
  },
};
