/**
 * The live-stock stream's cap (MAX_STREAMS_PER_USER) holds after a tick stalls past the slot's
 * 30 s lease. A stream renews its lease on every tick; a tick waiting on MySQL (here a table locked
 * for 31 s, as a dump's LOCK TABLES or an ALTER TABLE queued behind a long transaction does) renews
 * nothing meanwhile, the lease runs out and the user's slots are free for new streams. The stalled
 * streams then went on: their renewal only refreshed a lease still there (ZADD XX), so it did
 * nothing, and they streamed on without a slot beside the new ones — 10 streams for a cap of 5.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnection } from 'mysql2/promise';
import { closeDb, db } from '@/lib/db/client';
import { env } from '@/lib/env';
import { closeRedis, redis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { createSession } from '@/lib/auth/session';
import { callRoute } from '@/e2e/support/helpers';
import { createConsoleFixture, seckillBody, type ConsoleFixture } from '@/e2e/support/fixtures/admin';
import { MAX_STREAMS_PER_USER } from '@/lib/admin/stream-slots';
import { keys } from '@/lib/redis/keys';
import { POST as createRoute } from '@/app/api/admin/vouchers/route';
import { GET as streamRoute } from '@/app/api/admin/vouchers/[id]/stock/stream/route';

const LEASE_MS = 30_000; // lib/admin/stream-slots.ts

let f: ConsoleFixture;
let voucherId: string;
let token: string;

beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
  await redis.del(keys.liveStreams(f.merchantA.id));
  token = await createSession(redis, { id: f.merchantA.id, nickName: 'm', icon: '', role: 'merchant' });
  voucherId = (await callRoute(createRoute, { token, body: seckillBody(f.shopA, { stock: 5 }) })).json.data.id;
});
afterAll(async () => {
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

/** A stream read as a browser would, all along: when each `stock` event came, and whether it ended. */
interface Watched {
  status: number;
  stockAt: number[];
  ended: boolean;
  stop(): Promise<void>;
}

async function watch(): Promise<Watched> {
  const abort = new AbortController();
  const req = new Request(`http://localhost:3000/api/admin/vouchers/${voucherId}/stock/stream`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
  const res = await streamRoute(req, { params: Promise.resolve({ id: voucherId }) });
  const w: Watched = { status: res.status, stockAt: [], ended: res.status !== 200, stop: async () => {} };
  if (res.status !== 200) return w;
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  const reading = (async () => {
    let text = '';
    for (;;) {
      const r = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (r.done) break;
      text += dec.decode(r.value);
      let cut: number;
      while ((cut = text.indexOf('\n\n')) >= 0) {
        if (text.slice(0, cut).startsWith('event: stock')) w.stockAt.push(Date.now());
        text = text.slice(cut + 2);
      }
    }
    w.ended = true;
  })();
  w.stop = async () => {
    abort.abort();
    await reader.cancel().catch(() => {});
    await reading;
  };
  return w;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async (what: string, ok: () => boolean, ms: number) => {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
};

describe('live-stock stream cap after a stalled tick', () => {
  it(`holds ${MAX_STREAMS_PER_USER} streams at most once a tick stalled past the lease`, { timeout: LEASE_MS + 60_000 }, async () => {
    const first = await Promise.all(Array.from({ length: MAX_STREAMS_PER_USER }, () => watch()));
    const later: Watched[] = [];
    const locker = await createConnection({ uri: env.DATABASE_URL });
    try {
      expect(first.map((w) => w.status)).toEqual(Array(MAX_STREAMS_PER_USER).fill(200));
      await until('a stock event on each stream', () => first.every((w) => w.stockAt.length > 0), 10_000);
      const extra = await watch();
      expect(extra.status).toBe(429);

      // Every tick reads tb_seckill_voucher: locked, each stream waits in its tick, renewing nothing.
      await locker.query('LOCK TABLES tb_seckill_voucher WRITE');
      const lockedAt = Date.now();
      await sleep(LEASE_MS + 1500);
      await locker.query('UNLOCK TABLES');
      expect(first.every((w) => !w.ended)).toBe(true);
      // Their leases ran out: the user's slots are free, and the stalled streams go on.
      later.push(...(await Promise.all(Array.from({ length: MAX_STREAMS_PER_USER }, () => watch()))));
      expect(later.map((w) => w.status)).toEqual(Array(MAX_STREAMS_PER_USER).fill(200));
      await until('the stalled streams past their stall', () => first.every((w) => w.ended || w.stockAt.some((t) => t > lockedAt)), 10_000);

      // Settled: a stream still running ticks about once a second.
      await sleep(3000);
      const from = Date.now();
      await sleep(2500);
      const live = [...first, ...later].filter((w) => !w.ended && w.stockAt.some((t) => t >= from));
      expect(live.length).toBeLessThanOrEqual(MAX_STREAMS_PER_USER);
      // Not fewer either: the new streams hold the slots the stalled ones lost.
      expect(later.filter((w) => !w.ended).length).toBe(MAX_STREAMS_PER_USER);
    } finally {
      await locker.query('UNLOCK TABLES').catch(() => {});
      await locker.end();
      await Promise.all([...first, ...later].map((w) => w.stop()));
      await redis.del(keys.liveStreams(f.merchantA.id));
    }
  });
});
