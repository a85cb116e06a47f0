/**
 * The spike with real concurrency (docs/benchmarks.md#the-real-concurrency-spike): 20 000 distinct
 * users by default, each on their own connection, all arriving within one second from several
 * client processes and loopback source addresses (e2e/bench/spike.ts); each runs the flow named
 * by the variant (e2e/bench/spike-flows.ts) to a final answer. The bare node:http server
 * (e2e/bench/ceiling-server.ts, same process count) takes the same spike first, in the same run;
 * the figure is the time until the last user has their final answer, for both, and the ratio.
 * Ends on the verified drain: oversold = duplicates = lost = 0, the invariants hold, and the whole
 * stock sold when there are more users than units.
 *
 * Options: --users U (20 000) --stock S (1 000) --clients C (client processes, 4) --sources A
 * (source addresses per spike; default one per 4 000 users, at least 4) --window seconds (1)
 * --processes P (web processes; default the product's WEB_CONCURRENCY) --workers W (1)
 * --timeout seconds (a request unanswered this long is a socket error and retried: 60)
 * --runs N (1: the whole spike, bare server then app, N times over; the figure is the median ratio)
 * --reserve PCT (the room's ROOM_RESERVE_PERCENT: no ticket once every unit is spoken for)
 * --part all|hot|split (the web server's WEB_PART; default the product's) --shape b (the hot-only
 * web server behind nginx, e2e/bench/front.ts, four workers at least; nginx's CPU counts as the app's)
 * --sched none|rr (node:cluster's scheduling in both servers, NODE_CLUSTER_SCHED_POLICY; default
 * the product's rule, workers/accept-policy.ts: one process over a deep kernel queue accepts for
 * itself, else rr, the primary accepting every connection and handing it to a process over IPC)
 * --known-door off (the web server without the known-answer door, docs/hot-server.md#the-known-answer-door)
 * --flow-<name> value (options of the flow). HOT_ADMISSION etc. reach the web server from the env.
 *
 * `--strategy room`: the sale is a merchant's room sale (proof-of-work cost --pow-cost, default 1000,
 * below the product's 50 000: the bench measures the server, and 20 000 phones' hashing cannot be
 * simulated on the same cores; the clients still solve every challenge, with native SHA-256) whose
 * start falls --room-start seconds into the window (half of it by default), so the tickets of
 * users arriving before it are shuffled and later ones queue FIFO. The bare server takes the same
 * spike with the plain grab flow (it cannot run a room). The run also checks that every user's
 * first answer was a ticket with a place, or 已抢光 for one who arrived after the last unit went
 * (never before the last winner had their grab token), and reports win order against ticket order
 * (e2e/bench/spike.ts winOrder). ROOM_ADMIT_PER_SECOND / ROOM_ADMIT_MAX_PER_SECOND / ROOM_HOLD_MS
 * reach the web server from the env.
 */
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { db } from '@/lib/db/client';
import { env } from '@/lib/env';
import { redis } from '@/lib/redis/client';
import { createTestUsers, createTestVoucher } from '@/e2e/support/fixtures/seckill';
import { expectFreshVoucher, knownDoorEnv, prepareBenchDb, purgeOrderQueue, raiseKernelQueues, round, verifySale, waitForDrain } from '../setup';
import { createRoomVoucher } from '@/e2e/support/fixtures/room';
import { keys } from '@/lib/redis/keys';
import { combineRuns, formatSpike, roomFigures, runSpike, sourceAddresses, spikeProblems, stepTimeline, summarizeSpike, winOrder, type UserRecord } from '../spike';
import { bareFlow, flows, solveAltcha, type Challenge } from '../spike-flows';
import type { RunResult, Scenario } from '../types';
import { runWrk, serversCpuSeconds, treeRunQueue } from '../wrk';
import { acceptPolicyHere } from '@/workers/accept-policy';

/** Each spike of a run takes a third octet of its own (two per --runs round, below 255). */
const MAX_RUNS = 20;

/** The open-files limit this process (and so every process it starts) has. */
function openFilesLimit(): number {
  const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
  const soft = line?.split(/\s{2,}/)[1];
  return soft === 'unlimited' || soft === undefined ? Infinity : Number(soft);
}

/**
 * Each client process holds its users' sockets until they have their answer: refuse a plan that the
 * open-files limit cannot hold. A web process holds its share only while those users wait, so
 * for the servers it is a warning (past the limit, node stops accepting for a moment: socket errors).
 */
function checkOpenFiles(users: number, clients: number, processes: number): string {
  const limit = openFilesLimit();
  const perClient = Math.ceil(users / clients) + 1024;
  if (perClient > limit) {
    throw new Error(`open-files limit ${limit} is too low for ${users} users over ${clients} client processes (each needs ~${perClient}): raise it (npm run bench raises it to the hard limit) or add --clients`);
  }
  const perServer = Math.ceil(users / processes) + 1024;
  return perServer > limit ? `; ! a web process may need ~${perServer} open files if every user waits at once (limit ${limit}): --processes ${Math.ceil(users / (limit - 1024))} avoids it` : '';
}

export const scenario: Scenario = {
  description: 'real-concurrency spike: every user on their own connection within one second, the app beside the bare node:http server; verified drain',
  variants: Object.keys(flows),
  async run(h, a, flow) {
    const users = a.extra.users ? a.users : 20_000;
    const stock = a.extra.stock ? a.stock : 1000;
    const processes = Number(a.extra.processes ?? env.WEB_CONCURRENCY) || availableParallelism();
    const clients = Number(a.extra.clients ?? 4);
    const sources = Number(a.extra.sources ?? Math.max(4, Math.ceil(users / 4000)));
    const windowMs = Number(a.extra.window ?? 1) * 1000;
    const timeoutMs = Number(a.extra.timeout ?? 60) * 1000;
    // --part split|hot|all: the web server's WEB_PART (docs/hot-server.md#the-split-server); default the product's.
    const part: Record<string, string> = a.extra.part ? { WEB_PART: a.extra.part } : {};
    if (a.extra.part && !['all', 'hot', 'split'].includes(a.extra.part)) throw new Error('--part must be all, hot or split');
    // --shape b: the hot-only web server behind nginx (e2e/bench/front.ts), nginx's CPU counted as the app's.
    if (a.extra.shape && a.extra.shape !== 'b') throw new Error('--shape must be b (the default is a)');
    const shapeB = a.extra.shape === 'b';
    if (shapeB && a.extra.part) throw new Error('--shape b runs the hot-only server: leave out --part');
    if (shapeB) Object.assign(part, { WEB_PART: 'hot', TRUSTED_PROXIES: '1' });
    Object.assign(part, knownDoorEnv(a.extra['known-door']));
    const frontWorkers = Math.max(4, processes);
    // --reserve PCT: the room gives no ticket once every unit is spoken for, with this reserve
    // (ROOM_RESERVE_PERCENT, docs/fair-sale.md#every-unit-spoken-for); default the env's.
    const reservePct = Number(a.extra.reserve ?? env.ROOM_RESERVE_PERCENT);
    if (a.extra.reserve === '' || !Number.isInteger(reservePct) || reservePct < 0 || reservePct > 1000) throw new Error('--reserve must be a whole per cent from 0 to 1000');
    if (a.extra.reserve !== undefined) part.ROOM_RESERVE_PERCENT = String(reservePct);
    const rounds = Number(a.extra.runs ?? 1);
    if (!Number.isInteger(rounds) || rounds < 1 || rounds > MAX_RUNS) throw new Error(`--runs must be a whole number from 1 to ${MAX_RUNS}`);
    const sched: Record<string, string> = a.extra.sched ? { NODE_CLUSTER_SCHED_POLICY: a.extra.sched } : {};
    const flowOptions = Object.fromEntries(Object.entries(a.extra).filter(([k]) => k.startsWith('flow-')).map(([k, v]) => [k.slice(5), v]));
    const fdWarning = checkOpenFiles(users, clients, processes);
    const kernel = raiseKernelQueues();
    await prepareBenchDb();
    await purgeOrderQueue();
    const line = h.progress('users');
    line(`creating ${users} users with sessions`);
    const created = await createTestUsers(db, redis, users);
    const tokens = created.map((u) => u.token);
    line(`${users} users`, true);
    const summary = [
      `spike ${flow}: ${users} users on their own connections within ${windowMs / 1000} s, stock ${stock}, ${clients} client processes, ${sources} source addresses per spike, ${processes} web process(es)${a.extra.part ? ` (WEB_PART=${a.extra.part})` : ''}${a.extra['known-door'] === 'off' ? ' (no known-answer door)' : ''}${shapeB ? ` (shape b: hot-only behind ${frontWorkers} nginx workers, nginx's CPU counted as the app's)` : ''}, cluster scheduling ${a.extra.sched ?? `${acceptPolicyHere(processes)} (the product's default here, workers/accept-policy.ts)`}, ${a.workers} worker(s); ${kernel.join(', ')}; open files ${openFilesLimit()}${fdWarning}`,
    ];
    // A second octet of its own per run, a third per spike: no spike meets another's TIME_WAIT ports.
    const run = randomInt(1, 255);
    const room = flow.startsWith('room');
    const spike = (origin: string, path: string, phase: number, userFlow = flow, t0?: number) =>
      runSpike({ origin, path, flow: userFlow, options: flowOptions, tokens, clients, sources: sourceAddresses(sources, run, phase), windowMs, timeoutMs, t0 });

    // --runs N: the same spike N times over (bare server, then the app, each time), the users made
    // once; the figure is the median ratio, with its range: one run of a spike on a shared box
    // cannot tell ×1.3 from ×1.6 (docs/benchmarks.md#reading-a-spike-on-a-shared-box).
    const once = async (r: number): Promise<RunResult> => {
      const lines: string[] = [];
      const tag = rounds > 1 ? `run ${r + 1} of ${rounds}: ` : '';
      const ceiling = await h.startCeiling(processes, sched);
      const ceilingCpu = serversCpuSeconds([ceiling.proc.child.pid!]);
      const ceilingQueue = treeRunQueue(ceiling.proc.child.pid!);
      h.log(`… ${tag}the spike on the bare node:http server`);
      const bareRun = await spike(ceiling.url, '/api/seckill/0', 2 * r + 1, bareFlow[flow] ?? flow);
      const bareCpuS = serversCpuSeconds([ceiling.proc.child.pid!]) - ceilingCpu;
      const bareWaitS = treeRunQueue(ceiling.proc.child.pid!).waitedS - ceilingQueue.waitedS;
      await h.stop(ceiling.proc);
      const bare = summarizeSpike(bareRun);
      lines.push(`  bare node:http: ${formatSpike(bare, bareRun.errors)} · server CPU ${round(bareCpuS, 2)} s${waitedFor(bareWaitS)}`);

      // --profile DIR: a V8 CPU profile of each web process (read with e2e/bench/profile-top.ts).
      const web = await h.startWeb({ WEB_CONCURRENCY: String(processes), ...sched, ...part }, a.extra.profile ? ['--cpu-prof', `--cpu-prof-dir=${a.extra.profile}`] : []);
      // Four nginx workers at least: each holds at most the open-files limit's connections (20 000
      // here), and the spike can hold one per user (20 000) plus one upstream per parked look.
      const front = shapeB ? await h.startFront(Number(new URL(web.url).port), Number(new URL(web.url).port), frontWorkers) : null;
      const entry = front?.url ?? web.url;
      const appPids = [web.proc.child.pid!, ...(front ? [front.proc.child.pid!] : [])];
      await h.startWorkers(a.workers);
      // Warm-up, as the grab scenario's: 2 s of refusals, so the measured spike finds its path compiled.
      const warm = await createTestVoucher(db, redis, { stock: 1, title: 'bench warm-up' });
      await runWrk({ url: `${entry}/api/seckill/${warm}`, tokens: tokens.slice(0, 1000), connections: 50, durationS: 2 });
      const powCost = Number(a.extra['pow-cost'] ?? 1000);
      const roomStartMs = Number(a.extra['room-start'] ?? windowMs / 2000) * 1000;
      // The room's spike starts at a set moment, so the sale's start can fall inside the window: far
      // enough ahead for the client processes to be forked and ready (else t0 moves and it is reported).
      if (room) await warmRoom(entry, tokens.slice(0, 200), powCost);
      const plannedT0 = Date.now() + 8000;
      const voucherId = room
        ? await createRoomVoucher(db, redis, { stock, powCost, startsInMs: plannedT0 + roomStartMs - Date.now() })
        : await createTestVoucher(db, redis, { stock, title: `bench spike ${flow}` });
      await expectFreshVoucher(voucherId, stock);
      const webCpu = serversCpuSeconds(appPids);
      const queued = () => appPids.reduce((t, pid) => t + treeRunQueue(pid).waitedS, 0);
      const webQueue = queued();
      h.log(`… ${tag}the spike on the app`);
      const appRun = await spike(entry, `/api/seckill/${voucherId}`, 2 * r + 2, flow, room ? plannedT0 : undefined);
      const webCpuS = serversCpuSeconds(appPids) - webCpu;
      const webWaitS = queued() - webQueue;
      const app = summarizeSpike(appRun);
      const drainS = await waitForDrain(voucherId, Date.now());
      await h.stopAll();
      // Accepted grabs: 200 without a code (a room's sold-out look is 200 SOLD_OUT).
      const accepted = appRun.records.filter((r) => r.status === 200 && !r.code).length;
      const roomState = room ? await redis.hgetall(keys.roomState(voucherId)) : {};
      const sale = await verifySale(voucherId, stock, accepted);
      const sold = Math.min(stock, users);
      const ratio = app.lastAnswerS / bare.lastAnswerS;
      lines.push(`  the app: ${formatSpike(app, appRun.errors)} · web CPU ${round(webCpuS, 2)} s${waitedFor(webWaitS)}`);
      lines.push(
        `  sold ${sale.orders} of ${sold} · oversold ${sale.oversold} · duplicates ${sale.duplicates} · lost ${sale.lost} · drain ${round(drainS, 2)} s · invariants ${sale.violations.length ? 'VIOLATED' : 'hold'}`,
      );
      const rf = room ? roomFigures(appRun.records) : undefined;
      // The same winners ordered by the sale's own clock: each order's create_time, the grab script's
      // Redis TIME in ms (ties at one millisecond count neither way), not the clients' receive times.
      const soldOrder = rf ? winOrder(await soldAt(voucherId, created.map((u) => u.userId), appRun.records), rf.order.positionsReached) : undefined;
      if (rf) {
        const startS = (Number((await db.selectFrom('tb_seckill_voucher').select('begin_time').where('voucher_id', '=', voucherId).executeTakeFirst())?.begin_time?.getTime?.() ?? NaN) - appRun.t0) / 1000;
        lines.push(
          `  room: sale started ${round(startS, 2)} s into the spike (planned ${roomStartMs / 1000} s${appRun.t0 !== plannedT0 ? `; the spike started ${appRun.t0 - plannedT0} ms late` : ''}), pow cost ${powCost}, ROOM_ADMIT_PER_SECOND ${env.ROOM_ADMIT_PER_SECOND}, ROOM_ADMIT_MAX_PER_SECOND ${env.ROOM_ADMIT_MAX_PER_SECOND || 'unset'}, ROOM_HOLD_MS ${env.ROOM_HOLD_MS}, ROOM_RESERVE_PERCENT ${reservePct}, ROOM_RESERVE_MIN ${env.ROOM_RESERVE_MIN} · ` +
            `room state ${JSON.stringify(roomState)} · first answer a ticket with a place: ${rf.firstTicket} of ${users}, 已抢光 (arrived after the last unit went): ${rf.firstSoldOut}, of them before the last winner's grab token: ${rf.soldOutTooEarly}, 名额已满 (every unit spoken for): ${rf.firstFull} · ` +
            `win order: ${rf.order.winners} winners of ${rf.order.reached} who posted a grab, ${rf.order.outOfPlace} not among the first ${rf.order.winners} places of those, ` +
            `inversions ${rf.order.inversions} of ${rf.order.pairs} pairs (${round(rf.order.inversionShare * 100, 2)} %), Kendall tau ${round(rf.order.tau, 3)} by the clients' clocks; ` +
            `by the sale's clock (orders' create_time): inversions ${soldOrder!.inversions}, ties ${soldOrder!.ties}, Kendall tau ${round(soldOrder!.tau, 3)}`,
        );
        lines.push(`  steps (first–median–last, since the spike's start): ${stepTimeline(appRun.records)}`);
      }
      // The spike shares the machine's cores with its own load generator: when servers and clients
      // together keep every core busy, the last answer cannot come before their CPU over the cores,
      // and the ratio follows the CPU each side needed more than anything the sale waits on.
      const cores = availableParallelism();
      const bareMachineS = bareCpuS + bare.clientCpuS;
      const appMachineS = webCpuS + app.clientCpuS;
      lines.push(
        `  machine: ${cores} cores · bare server + clients ${round(bareMachineS, 2)} CPU-s (≥ ${round(bareMachineS / cores, 2)} s on the cores) · app + clients ${round(appMachineS, 2)} CPU-s (≥ ${round(appMachineS / cores, 2)} s) · CPU ×${round(appMachineS / bareMachineS, 2)}`,
      );
      lines.push(`  last answer: the app ${round(app.lastAnswerS, 2)} s, bare node:http ${round(bare.lastAnswerS, 2)} s: ×${round(ratio, 2)} the bare server's time (figures noisy on a shared host)`);

      const failures = [
        ...(sale.oversold ? [`oversold ${sale.oversold}`] : []),
        ...(sale.duplicates ? [`duplicates ${sale.duplicates}`] : []),
        ...(sale.lost ? [`lost ${sale.lost}`] : []),
        ...(sale.orders !== sold ? [`sold ${sale.orders} of ${sold}`] : []),
        ...sale.violations,
        ...spikeProblems('the app', app),
        ...spikeProblems('the bare server', bare),
        ...(rf && rf.firstTicket + rf.firstSoldOut + rf.firstFull !== users ? [`the app: ${users - rf.firstTicket - rf.firstSoldOut - rf.firstFull} users' first answer was neither a ticket nor 已抢光 nor 名额已满`] : []),
        ...(rf && rf.soldOutTooEarly ? [`the app: ${rf.soldOutTooEarly} users heard 已抢光 before the last winner had a grab token`] : []),
      ];
      return {
        line: {
          scenario: 'spike', variant: flow, users, stock, processes, clients, sources, window_s: windowMs / 1000, requests: app.requests,
          finals: app.finals, answers: app.answers, errors: app.errors, fivexx: app.fivexx, unanswered: app.unanswered,
          started_all_s: round(app.startedAllS, 2), connected_all_s: round(app.connectedAllS, 2),
          last_answer_s: round(app.lastAnswerS, 2), wait_p50_s: round(app.waitP50S, 2), wait_p99_s: round(app.waitP99S, 2),
          bare_last_answer_s: round(bare.lastAnswerS, 2), bare_errors: bare.errors, ratio_to_bare: round(ratio, 2),
          client_cpu_s: round(app.clientCpuS, 2), client_system_s: round(app.clientSystemS, 2), client_share: round(app.clientShare, 2), web_cpu_s: round(webCpuS, 2), bare_cpu_s: round(bareCpuS, 2), cpu_ratio: round(appMachineS / bareMachineS, 2),
          ...(Number.isFinite(webWaitS) && Number.isFinite(bareWaitS) ? { web_waited_s: round(webWaitS, 2), bare_waited_s: round(bareWaitS, 2) } : {}),
          ...(rf ? { pow_cost: powCost, first_ticket: rf.firstTicket, first_soldout: rf.firstSoldOut, first_full: rf.firstFull, soldout_too_early: rf.soldOutTooEarly, winners: rf.order.winners, reached_grab: rf.order.reached, out_of_place: rf.order.outOfPlace, inversions: rf.order.inversions, inversion_share: round(rf.order.inversionShare, 4), kendall_tau: round(rf.order.tau, 3), sale_clock_inversions: soldOrder!.inversions, sale_clock_ties: soldOrder!.ties, sale_clock_tau: round(soldOrder!.tau, 3) } : {}),
          orders: sale.orders, oversold: sale.oversold, duplicates: sale.duplicates, lost: sale.lost, drain_s: round(drainS, 2),
        },
        rps: app.requests / app.lastAnswerS,
        p99Ms: app.waitP99S * 1000,
        failures: failures.map((f) => `${tag}${f}`),
        summary: lines,
      };
    };
    const results: RunResult[] = [];
    for (let r = 0; r < rounds; r++) results.push(await once(r));
    return combineRuns(summary, results);
  },
};

/** ", its main threads waited X s runnable for a core" (e2e/bench/wrk.ts treeRunQueue), or nothing where the kernel does not say. */
const waitedFor = (s: number) => (Number.isFinite(s) ? `, its main threads waited ${round(s, 2)} s runnable for a core` : '');

/** The winners (accepted, with a place) with the moment the sale recorded each one's order (ms). */
async function soldAt(voucherId: string, userIds: string[], records: UserRecord[]): Promise<{ position: number; wonMs: number }[]> {
  const rows = await db.selectFrom('tb_voucher_order').select(['user_id', 'create_time']).where('voucher_id', '=', voucherId).execute();
  const at = new Map(rows.map((r) => [String(r.user_id), new Date(r.create_time).getTime()]));
  return records
    .filter((r) => r.status === 200 && !r.code && r.position !== undefined && at.has(userIds[r.index]!))
    .map((r) => ({ position: r.position!, wonMs: at.get(userIds[r.index]!)! }));
}

/** A few users through a small started room sale, so the measured spike finds the room's routes loaded and compiled. */
async function warmRoom(origin: string, tokens: string[], powCost: number): Promise<void> {
  const vid = await createRoomVoucher(db, redis, { stock: 1, powCost });
  const base = `${origin}/api/seckill/${vid}`;
  await Promise.all(
    tokens.map(async (t) => {
      const headers = { authorization: `Bearer ${t}`, 'content-type': 'application/json' };
      const j = (await (await fetch(`${base}/room`, { method: 'POST', headers })).json()) as { data?: { ticket?: string } };
      await fetch(`${base}/room`, { headers });
      const altcha = solveAltcha((await (await fetch(`${base}/room/challenge`, { headers })).json()) as Challenge);
      const p = (await (await fetch(`${base}/room/token`, { method: 'POST', headers, body: JSON.stringify({ ticket: j.data?.ticket, altcha }) })).json()) as { data?: { grabUrl?: string } };
      if (p.data?.grabUrl) await fetch(`${origin}${p.data.grabUrl}`, { method: 'POST', headers });
    }),
  );
}
