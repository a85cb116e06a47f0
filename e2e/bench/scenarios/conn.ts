/**
 * What one connection costs the server when its answer is already known, against the bare
 * node:http server (docs/benchmarks.md#what-a-connection-costs): the room spike's crowd, every user
 * on a new connection told 已抢光 from memory, without the spike's noise. wrk (C, far cheaper per
 * connection than the spike's Node clients) sends `POST …/room {"buy":true}` with a Bearer token
 * and `Connection: close`, so every request is a new connection, first to a sold-out room sale on
 * the product's web server, then to the bare server (e2e/bench/ceiling-server.ts), alternating,
 * --runs times (3). The figure is the servers' CPU per connection (their process trees, from
 * /proc), the medians side by side: on a busy shared box a time swings by a third from one minute
 * to the next, the CPU a connection takes far less. wrk's own CPU per connection is printed too.
 *
 * Options: --connections C (16) --duration s (5, per measurement) --runs N (3) --users U (2 000)
 * --threads T (wrk's, 2: enough to keep one web process busy) --processes P (the product's
 * WEB_CONCURRENCY) --profile DIR (a V8 CPU profile of each web process, and of the bare server's in DIR/bare)
 * --shape b (the hot-only web server behind nginx, e2e/bench/front.ts, with as many workers as web
 * processes; nginx's CPU counts as the app's: what a light front in C does to a connection's cost)
 * --known-door off (node:http reads every request: the known-answer door's A/B). Every answer of the app
 * must be the sold-out view (its body holds `"state":"soldout"`), else the run fails.
 */
import { db } from '@/lib/db/client';
import { env } from '@/lib/env';
import { redis } from '@/lib/redis/client';
import { createTestUsers } from '@/e2e/support/fixtures/seckill';
import { createRoomVoucher } from '@/e2e/support/fixtures/room';
import { knownDoorEnv, prepareBenchDb, purgeOrderQueue, raiseKernelQueues, round } from '../setup';
import { acceptPolicyHere } from '@/workers/accept-policy';
import { solveAltcha, type Challenge } from '../spike-flows';
import type { Scenario } from '../types';
import { runWrk, type WrkResult } from '../wrk';

const BODY = JSON.stringify({ buy: true });
/** What the sold-out room's known answer holds (lib/seckill/room/room.ts soldOutFromMemory). */
const SOLD_OUT = '"state":"soldout"';

/** The room sale's one unit, bought the way the spike's winners buy it (join asking to buy, solve, join again with the solution); resolves once another user is told 已抢光. */
async function sellOut(origin: string, voucherId: string, buyer: string, other: string): Promise<void> {
  const url = `${origin}/api/seckill/${voucherId}/room`;
  const post = async (token: string, body: unknown) => {
    const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as { data?: { state?: string; challenge?: Challenge } } };
  };
  const first = await post(buyer, { buy: true });
  const altcha = first.json.data?.challenge && solveAltcha(first.json.data.challenge);
  if (!altcha) throw new Error(`the buyer's join answered ${first.status} without a challenge: ${JSON.stringify(first.json)}`);
  const bought = await post(buyer, { buy: true, altcha, wait: 5000 });
  if (bought.status !== 200) throw new Error(`the buyer's purchase answered ${bought.status}: ${JSON.stringify(bought.json)}`);
  for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 200))) {
    if ((await post(other, { buy: true })).json.data?.state === 'soldout') return;
  }
  throw new Error('the room sale was not sold out 10 s after its one unit was bought');
}

/** The middle value (the mean of the two middle ones for an even count). */
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const perConn = (r: WrkResult) => `${Math.round(r.rps)} connections/s, server ${round(r.serverCpuUsPerRequest)} µs, wrk ${round((r.generatorCpuS * 1e6) / r.requests)} µs per connection`;
/** Anything but a 200 for every request, or a socket error: the measurement is not of the known answer. */
const problems = (who: string, r: WrkResult) => [
  ...(r.errors ? [`${who}: ${r.errors} socket errors`] : []),
  ...Object.entries(r.statuses).filter(([s]) => s !== '200').map(([s, k]) => `${who}: ${k} × ${s}`),
];

export const scenario: Scenario = {
  description: "per-connection CPU of a sold-out room's known answer against the bare node:http server, each request a new connection (wrk, Connection: close)",
  variants: ['soldout'],
  async run(h, a) {
    const users = a.extra.users ? a.users : 2000;
    const connections = a.extra.connections ? a.connections : 16;
    const durationS = a.extra.duration ? a.duration : 5;
    const rounds = Number(a.extra.runs ?? 3);
    if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) throw new Error('--runs must be a whole number from 1 to 20');
    const processes = Number(a.extra.processes ?? env.WEB_CONCURRENCY) || 1;
    // As the spike: with the kernel's default queue (4 096) a lone web process would be handed its
    // connections by the cluster primary, an IPC round trip each that the app and the bare server
    // both pay, and the ratio would shrink towards 1 (seen: ×1.14 against ×1.48 raised).
    const kernel = raiseKernelQueues();
    await prepareBenchDb();
    await purgeOrderQueue();
    const made = await createTestUsers(db, redis, users);
    const tokens = made.map((u) => u.token);

    // --profile DIR: a V8 CPU profile of each web process (read with e2e/bench/profile-top.ts).
    if (a.extra.shape && a.extra.shape !== 'b') throw new Error('--shape must be b (the default is a)');
    const shapeB = a.extra.shape === 'b';
    const web = await h.startWeb({ WEB_CONCURRENCY: String(processes), ...knownDoorEnv(a.extra['known-door']), ...(shapeB ? { WEB_PART: 'hot', TRUSTED_PROXIES: '1' } : {}) }, a.extra.profile ? ['--cpu-prof', `--cpu-prof-dir=${a.extra.profile}`] : []);
    const webPort = Number(new URL(web.url).port);
    const front = shapeB ? await h.startFront(webPort, webPort, processes) : null;
    const entry = front?.url ?? web.url;
    await h.startWorkers(a.workers);
    const voucherId = await createRoomVoucher(db, redis, { stock: 1, powCost: 1000 });
    await sellOut(entry, voucherId, tokens[0]!, tokens[1]!);
    const ceiling = await h.startCeiling(processes, {}, a.extra.profile ? ['--cpu-prof', `--cpu-prof-dir=${a.extra.profile}/bare`] : []);
    const app = { url: `${entry}/api/seckill/${voucherId}/room`, pids: [web.proc.child.pid!, ...(front ? [front.proc.child.pid!] : [])] };
    const bare = { url: `${ceiling.url}/api/seckill/0/room`, pids: [ceiling.proc.child.pid!] };
    const threads = Number(a.extra.threads ?? 2);
    const measure = (s: typeof app, d = durationS) =>
      runWrk({ url: s.url, tokens, connections, threads, durationS: d, body: BODY, close: true, expect: s === app ? SOLD_OUT : undefined, serverPids: s.pids });

    h.log('… warm-up: 2 s on each');
    await measure(app, 2);
    await measure(bare, 2);
    const runs: { app: WrkResult; bare: WrkResult }[] = [];
    const summary = [`conn soldout: ${connections} wrk connections over ${threads} thread(s), each request a new one (Connection: close), ${durationS} s per measurement, the two servers in turn (first the app, then the bare server first, …), ${rounds} time(s); ${processes} web process(es)${shapeB ? ` (shape b: hot-only behind ${processes} nginx worker(s), nginx's CPU counted as the app's)` : ''}, cluster scheduling ${acceptPolicyHere(processes)} (workers/accept-policy.ts); ${kernel.join(', ')}; ${users} users' tokens in turn`];
    for (let r = 0; r < rounds; r++) {
      h.log(`… run ${r + 1} of ${rounds}`);
      // Alternating which goes first, so a drift of the box's load does not always fall on one side.
      const one = r % 2 === 0 ? { app: await measure(app), bare: await measure(bare) } : { bare: await measure(bare), app: await measure(app) };
      runs.push(one);
      summary.push(`  run ${r + 1}: the app ${perConn(one.app)} · bare node:http ${perConn(one.bare)}`);
    }
    await h.stopAll();

    const appUs = median(runs.map((r) => r.app.serverCpuUsPerRequest));
    const bareUs = median(runs.map((r) => r.bare.serverCpuUsPerRequest));
    const ratios = runs.map((r) => r.app.serverCpuUsPerRequest / r.bare.serverCpuUsPerRequest);
    const ratio = median(ratios);
    const wrkUs = (w: 'app' | 'bare') => median(runs.map((r) => (r[w].generatorCpuS * 1e6) / r[w].requests));
    summary.push(
      `  server CPU per connection, medians: the app ${round(appUs)} µs, bare node:http ${round(bareUs)} µs; the app ×${round(ratio, 2)} the bare server's, median of the runs (${ratios.map((x) => `×${round(x, 2)}`).join(', ')}); wrk ${round(wrkUs('app'))} µs (app), ${round(wrkUs('bare'))} µs (bare) per connection`,
    );
    return {
      line: {
        scenario: 'conn', variant: 'soldout', connections, duration_s: durationS, runs: rounds, processes,
        app_us: round(appUs), bare_us: round(bareUs), ratio: round(ratio, 2), ratios: ratios.map((x) => round(x, 2)), threads,
        app_rps: Math.round(median(runs.map((r) => r.app.rps))), bare_rps: Math.round(median(runs.map((r) => r.bare.rps))),
        wrk_app_us: round(wrkUs('app')), wrk_bare_us: round(wrkUs('bare')),
      },
      rps: median(runs.map((r) => r.app.rps)),
      failures: runs.flatMap((r) => [...problems('the app', r.app), ...problems('bare node:http', r.bare)]),
      summary,
    };
  },
};
