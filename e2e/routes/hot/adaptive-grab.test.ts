/**
 * Adaptive admission on the real grab (docs/hot-server.md#adaptive-admission): the product's web
 * server (workers/web-server.ts, one process, hot routes only so no build is needed) with
 * HOT_ADMISSION=adaptive, then with the fixed limit, each taking the same offered load: one
 * client alone, then C closed-loop clients, then 3C. Every request is a real grab of a real
 * voucher — Bearer session, the grab script in Redis — by users who already hold a unit (recorded
 * by the grab script itself), so each is answered 409 ALREADY_BOUGHT after its round trip and the
 * load stays the same from the first second to the last (an accepted grab would use up users and
 * stock). A shed client (503) retries 10 ms later, as the bench's clients retry after Retry-After.
 * Adaptive: the p90 of the answered grabs at 3C stays within 1.5× of that at C and the excess is
 * shed; fixed: nothing shed, the p90 grows with the load (more than 2×).
 *
 * Opt-in (HOT_ADMISSION_PROOF=1), not part of npm test: it has not passed on the 2-core box shared
 * with other sessions. The limiter redesigned on 2026-11-25 no longer sheds at C and grows its
 * p90 less than fixed (×1.72 against ×2.6 in the last run), but not within the bounds (1.5×, and
 * 0.6× fixed's), and on a quiet box C = 12 is not past the grab path's knee (fixed serves more at
 * 3C), so flat latency there costs throughput (docs/hot-server.md#adaptive-admission). It prints
 * its figures either way.
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
/** Closed-loop clients at 1×: past the knee of one web process on this box (its throughput no longer grows). */
const C = 12;

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

const phase = (port: number, clients: number, ms: number) => closedLoopGrabs({ port, path: `/api/seckill/${voucherId}`, tokens, clients, ms, okStatus: 409 });

/**
 * Both servers run side by side and take each phase one after the other (adaptive, then fixed), so
 * a neighbour's burst on this shared machine lands on both alike instead of on one whole run.
 */
async function runBoth() {
  const [a, f] = await Promise.all([startWeb('adaptive'), startWeb('fixed')]);
  try {
    const steps = [
      ['warm', 1, 1500],
      ['alone', 1, 1500],
      ['once', C, 4000],
      ['tripled', 3 * C, 4000],
    ] as const;
    const adaptive: Record<string, ClosedLoopResult> = {};
    const fixed: Record<string, ClosedLoopResult> = {};
    for (const [name, clients, ms] of steps) {
      adaptive[name] = await phase(a.port, clients, ms);
      fixed[name] = await phase(f.port, clients, ms);
    }
    return { adaptive, fixed };
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
    const { adaptive: a, fixed: f } = await runBoth();
    const seen = JSON.stringify({ adaptive: a, fixed: f }); // in the failure message
    console.log(`adaptive admission figures: ${seen}`); // the figures docs/hot-server.md records
    for (const r of [...Object.values(a), ...Object.values(f)]) expect(r.other, `every grab is answered 409 ALREADY_BOUGHT or shed with 503: ${seen}`).toEqual({});
    const adaptive = { alone: a.alone!, once: a.once!, tripled: a.tripled! };
    const fixed = { once: f.once!, tripled: f.tripled! };

    expect(adaptive.alone.shed, seen).toBe(0);
    expect(adaptive.tripled.answered, seen).toBeGreaterThan(200);
    expect(adaptive.tripled.shed, seen).toBeGreaterThan(0);
    expect(adaptive.tripled.p90, seen).toBeLessThan(1.5 * adaptive.once.p90);
    expect(adaptive.tripled.p90, seen).toBeLessThan(0.6 * fixed.tripled.p90);

    expect(fixed.once.shed + fixed.tripled.shed, seen).toBe(0);
    expect(fixed.tripled.p90, seen).toBeGreaterThan(2 * fixed.once.p90);
  }, 240_000);
});
