/**
 * Adaptive admission against the fixed limit on the real grab (docs/hot-server.md#adaptive-admission):
 * two web servers side by side, HOT_ADMISSION=adaptive and fixed, each taking the same closed-loop
 * load (e2e/support/closed-loop.ts) phase by phase, alternating: one client alone, then C clients,
 * then 3C. Every request is a real grab — Bearer session, the grab script in Redis — by a user who
 * already holds a unit, answered 409 after its round trip, so the load is the same from start to
 * end. Prints, per mode and phase, the grab latency (p50/p90/p99 of the 409s), answered/s and 503s,
 * and how much the p90 grew while the offered load tripled.
 * The same proof at test size with pass/fail bounds: e2e/routes/hot/adaptive-grab.test.ts.
 * Options: --clients C (12) --phase seconds (4) --processes P (the product's WEB_CONCURRENCY) --users U (200).
 */
import { db } from '@/lib/db/client';
import { env } from '@/lib/env';
import { redis } from '@/lib/redis/client';
import { closedLoopGrabs, type ClosedLoopResult } from '@/e2e/support/closed-loop';
import { acceptWithoutPublishing, createTestUsers, createTestVoucher } from '@/e2e/support/fixtures/seckill';
import { prepareBenchDb, purgeOrderQueue, round } from '../setup';
import type { Scenario } from '../types';

const MODES = ['adaptive', 'fixed'] as const;

const fmt = (r: ClosedLoopResult) => `p50 ${r.p50} ms, p90 ${r.p90} ms, p99 ${r.p99} ms · ${r.perSecond} answered/s · ${r.shed} × 503`;

export const scenario: Scenario = {
  description: 'adaptive admission against the fixed limit: the real grab at 1, C and 3C closed-loop clients, two servers side by side',
  variants: ['grab'],
  needsBuild: false, // hot routes only (WEB_PART=hot): Next is never loaded
  async run(h, a) {
    const users = a.extra.users ? a.users : 200;
    const clients = Number(a.extra.clients ?? 12);
    const phaseMs = Number(a.extra.phase ?? 4) * 1000;
    const processes = String(Number(a.extra.processes ?? env.WEB_CONCURRENCY) || 1);
    await prepareBenchDb();
    await purgeOrderQueue();
    const voucherId = await createTestVoucher(db, redis, { stock: users, title: 'bench admission' });
    const made = await createTestUsers(db, redis, users);
    for (const u of made) await acceptWithoutPublishing(redis, voucherId, u.userId);
    const tokens = made.map((u) => u.token);

    const servers = await Promise.all(MODES.map((mode) => h.startWeb({ WEB_CONCURRENCY: processes, WEB_PART: 'hot', HOT_ADMISSION: mode, HOT_MIN_IN_FLIGHT: '1' })));
    const ports = servers.map((s) => Number(new URL(s.url).port));
    const results: Record<string, Record<string, ClosedLoopResult>> = { adaptive: {}, fixed: {} };
    const phases = [['warm-up', 1], ['alone', 1], ['C', clients], ['3C', 3 * clients]] as const;
    for (const [name, n] of phases) {
      h.log(`… ${name}: ${n} client(s), adaptive then fixed`);
      for (const [i, mode] of MODES.entries()) {
        results[mode]![name] = await closedLoopGrabs({ port: ports[i]!, path: `/api/seckill/${voucherId}`, tokens, clients: n, ms: phaseMs, okStatus: 409 });
      }
    }
    await h.stopAll();

    const growth = (mode: string) => results[mode]!['3C']!.p90 / results[mode]!.C!.p90;
    const summary = [`admission: ${users} users who already hold a unit, ${processes} web process(es) per server (hot routes only), C = ${clients}, ${phaseMs / 1000} s per phase (the last two thirds measured)`];
    for (const mode of MODES) {
      for (const [name] of phases.slice(1)) summary.push(`  ${mode.padEnd(8)} ${name.padEnd(5)} ${fmt(results[mode]![name]!)}`);
      summary.push(`  ${mode}: p90 ×${round(growth(mode), 2)} while the offered load tripled`);
    }
    const other = MODES.flatMap((m) => Object.values(results[m]!).flatMap((r) => Object.entries(r.other).map(([k, v]) => `${m}: ${v} answers ${k}`)));
    return {
      line: {
        scenario: 'admission', variant: 'grab', users, clients, processes: Number(processes),
        adaptive_p90_ms: [results.adaptive!.C!.p90, results.adaptive!['3C']!.p90], fixed_p90_ms: [results.fixed!.C!.p90, results.fixed!['3C']!.p90],
        adaptive_per_s: [results.adaptive!.C!.perSecond, results.adaptive!['3C']!.perSecond], fixed_per_s: [results.fixed!.C!.perSecond, results.fixed!['3C']!.perSecond],
        adaptive_shed: results.adaptive!['3C']!.shed, adaptive_growth: round(growth('adaptive'), 2), fixed_growth: round(growth('fixed'), 2),
      },
      rps: results.adaptive!['3C']!.perSecond,
      p99Ms: results.adaptive!['3C']!.p99,
      failures: other,
      summary,
    };
  },
};
