/**
 * Console test fixtures: an admin, two merchants each owning a fresh shop, and a consumer, all
 * with real Redis sessions (Bearer tokens), unique per call so test files never collide.
 */
import { randomInt } from 'node:crypto';
import type { RedisClient } from '@/lib/redis/types';
import type { DB } from '@/lib/db/client';
import type { Role } from '@/lib/db/schema';
import { createSession } from '@/lib/auth/session';
import { randomPhone } from '@/lib/test/helpers';
import { insertShop, insertUser } from '@/lib/admin/testing.repository';

export interface ConsoleUser {
  id: string;
  role: Role;
  token: string;
}

export interface ConsoleFixture {
  admin: ConsoleUser;
  merchantA: ConsoleUser;
  merchantB: ConsoleUser;
  consumer: ConsoleUser;
  shopA: string;
  shopB: string;
}

async function user(db: DB, redis: RedisClient, role: Role): Promise<ConsoleUser> {
  const id = await insertUser(db, randomPhone(), role);
  return { id, role, token: await createSession(redis, { id, nickName: `${role}-${id}`, icon: '', role }) };
}

export async function createConsoleFixture(db: DB, redis: RedisClient): Promise<ConsoleFixture> {
  const [admin, merchantA, merchantB, consumer] = [
    await user(db, redis, 'admin'),
    await user(db, redis, 'merchant'),
    await user(db, redis, 'merchant'),
    await user(db, redis, 'user'),
  ];
  const tag = `${Date.now().toString(36)}${randomInt(0, 1e6)}`;
  const shopA = await insertShop(db, `测试店A-${tag}`, merchantA.id);
  const shopB = await insertShop(db, `测试店B-${tag}`, merchantB.id);
  return { admin, merchantA, merchantB, consumer, shopA, shopB };
}

/** A valid create body for a flash sale that is live now (override anything). */
export function seckillBody(shopId: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Date.now();
  return {
    shopId,
    title: `测试秒杀 ${randomInt(0, 1e9)}`,
    payValue: 990,
    actualValue: 5000,
    type: 1,
    stock: 10,
    beginTime: new Date(now - 60_000).toISOString(),
    endTime: new Date(now + 3_600_000).toISOString(),
    ...over,
  };
}
