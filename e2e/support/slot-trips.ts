/**
 * What Redis saw of one voucher while some work ran, by MONITOR (commands a Lua script runs show up
 * with source "lua"): the round trips clients made in the voucher's slot, the commands the scripts
 * ran there, and everything clients sent to the test's database. For tests that pin what a request
 * costs Redis (e2e/routes/reservation/grab-cost.test.ts).
 */
import { redis } from '@/lib/redis/client';
import { waitFor } from '@/e2e/support/fixtures/seckill';
import { monitorRedis } from '@/e2e/support/redis-monitor';

export interface Seen {
  /** Commands clients sent naming the voucher's keys (round trips in its slot). */
  trips: string[][];
  /** Commands the scripts ran on the voucher's keys. */
  inside: string[][];
  /** Every command any client sent to this test's database, whatever it names (sessions, limits…). */
  all: string[][];
}

/** What Redis saw of this voucher (in this test's database) while `work` ran. */
export async function seen(voucherId: string, work: () => Promise<unknown>): Promise<Seen> {
  const out: Seen = { trips: [], inside: [], all: [] };
  // MONITOR lines come in the server's order, but late on a busy server: after the work, a command
  // naming a marker key; once that line is seen, every line of the work has been.
  const marker = `seckill:{${voucherId}}:monitor-marker`;
  let markerSeen = false;
  // Only this test's database (REDIS_URL's), on a raw socket of its own (e2e/support/redis-monitor.ts).
  const monitor = await monitorRedis(({ source, args }) => {
    if (args.includes(marker)) markerSeen = true;
    else if (!markerSeen && source !== 'lua') out.all.push(args);
    if (!args.some((a) => a.includes(`{${voucherId}}`)) || markerSeen) return;
    else (source === 'lua' ? out.inside : out.trips).push(args);
  });
  try {
    await work();
    await redis.exists(marker);
    await waitFor('the MONITOR lines of the work', async () => markerSeen, 10_000, 10);
    return out;
  } finally {
    monitor.stop();
  }
}

/** The scripts among the round trips: EVAL the first time a connection runs one, EVALSHA after. */
export const scriptCalls = (s: Seen): string[][] => s.trips.filter((c) => /^eval(sha)?$/i.test(c[0]!));
