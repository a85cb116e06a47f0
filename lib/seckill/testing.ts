/**
 * Fixtures for the flash-sale tests and the benchmark: fresh vouchers, many logged-in users at
 * once (real sessions, created directly instead of through 1000 SMS round trips), and polling.
 */
import { randomInt } from 'node:crypto';
import type { RedisClient } from '@/lib/redis/types';
import { scanKeys } from '@/lib/redis/keyspace';
import type { DB } from '@/lib/db/client';
import { createSession } from '@/lib/auth/session';
import { preheatVoucher } from '@/lib/seckill/preheat';
import { firstShopId, insertSeckillVoucher } from '@/lib/seckill/seckill.repository';
import { insertUsersIgnoringPhones } from '@/lib/seckill/testing.repository';
import { nextOrderId } from '@/lib/id';
import { parseOrderMessage, type OrderMessage } from '@/lib/order/message';
import { keys } from '@/lib/redis/keys';
import { runGrabScript } from '@/lib/seckill/grab';

export async function createTestVoucher(
  db: DB,
  redis: RedisClient,
  opts: { stock: number; startsInMs?: number; endsInMs?: number; preheat?: boolean; title?: string },
): Promise<string> {
  const now = Date.now();
  const id = await insertSeckillVoucher(db, {
    shopId: (await firstShopId(db)) ?? '1',
    title: opts.title ?? `测试秒杀券 ${randomInt(0, 1e9)}`,
    payValue: 990,
    actualValue: 5000,
    stock: opts.stock,
    beginTime: new Date(now + (opts.startsInMs ?? -60_000)),
    endTime: new Date(now + (opts.endsInMs ?? 3_600_000)),
  });
  if (opts.preheat !== false) await preheatVoucher(db, redis, id);
  return id;
}

export interface TestUser {
  userId: string;
  token: string;
  phone: string;
}

/** n consumers with live sessions; phones come from one random block so a run never collides with itself. */
export async function createTestUsers(db: DB, redis: RedisClient, n: number): Promise<TestUser[]> {
  const start = randomInt(0, 999_999_999 - n);
  const phones = Array.from({ length: n }, (_, i) => `17${String(start + i).padStart(9, '0')}`);
  const rows = await insertUsersIgnoringPhones(db, phones);
  const users: TestUser[] = [];
  for (let i = 0; i < rows.length; i += 200) {
    const chunk = rows.slice(i, i + 200);
    const tokens = await Promise.all(chunk.map((u) => createSession(redis, { id: u.id, nickName: u.nickName, icon: '', role: 'user' })));
    chunk.forEach((u, j) => users.push({ userId: u.id, phone: u.phone, token: tokens[j]! }));
  }
  return users;
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Waits out the keys this file left with a TTL of a few seconds (per-second rate-limit windows,
 * sweep claims), so a later test file that compares DBSIZE before and after does not see them
 * expire under its feet.
 */
export async function waitOutShortLivedKeys(redis: RedisClient, horizonMs = 3000): Promise<void> {
  let longest = 0;
  for await (const batch of scanKeys(redis)) {
    for (const ttl of await Promise.all(batch.map((k) => redis.pttl(k)))) {
      if (ttl > 0 && ttl <= horizonMs) longest = Math.max(longest, ttl);
    }
  }
  if (longest > 0) await new Promise((r) => setTimeout(r, longest + 50));
}

/** An accepted grab exactly as the Lua script records it, but never published: a crash right after the script. */
export async function acceptWithoutPublishing(redis: RedisClient, voucherId: string, userId: string): Promise<OrderMessage> {
  const orderId = await nextOrderId(redis);
  const [code, payload] = await runGrabScript(redis, { voucherId, userId, orderId });
  if (code !== 0) throw new Error(`the grab script refused user ${userId} on voucher ${voucherId}: code ${code}`);
  await redis.sadd(keys.seckillActive(), voucherId);
  const parsed = parseOrderMessage(payload!);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.msg;
}
