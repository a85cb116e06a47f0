/**
 * Order reads are counted per user (`orderReadUser`) before MySQL is read: GET /api/orders/{id}
 * reads MySQL up to four times for an id nobody owns, and was not counted at all, so one account
 * could mint MySQL reads without end (and, on many connections, keep the hot server's slots busy
 * with them during a sale). The same count covers the order list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { limitPoints, resetLimit } from '@/lib/rate-limit';
import { callRoute } from '@/e2e/support/helpers';
import { createTestUsers, type TestUser } from '@/e2e/support/fixtures/seckill';
import { GET as orderRoute } from '@/app/api/orders/[id]/route';
import { GET as ordersRoute } from '@/app/api/orders/route';

let walker: TestUser;
let other: TestUser;

beforeAll(async () => {
  const users = await createTestUsers(db, redis, 2);
  walker = users[0]!;
  other = users[1]!;
});

afterAll(async () => {
  await Promise.all([resetLimit('orderReadUser', walker.userId), resetLimit('orderReadUser', other.userId)]);
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

const unknownId = () => `9${String(Math.floor(Math.random() * 1e14)).padStart(14, '0')}`;

describe('order reads per user', () => {
  it('one user walking order ids meets the limit, then the list is refused too; another user reads on', async () => {
    const allowed = limitPoints('orderReadUser');
    const statuses: number[] = [];
    for (let i = 0; i < allowed + 5; i += 50) {
      const batch = Math.min(50, allowed + 5 - i);
      const answers = await Promise.all(Array.from({ length: batch }, () => callRoute(orderRoute, { token: walker.token, params: { id: unknownId() } })));
      statuses.push(...answers.map((r) => r.status));
    }
    expect(statuses.filter((s) => s === 404)).toHaveLength(allowed);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);

    const refused = await callRoute(orderRoute, { token: walker.token, params: { id: unknownId() } });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await callRoute(ordersRoute, { token: walker.token })).status).toBe(429);

    expect((await callRoute(orderRoute, { token: other.token, params: { id: unknownId() } })).status).toBe(404);
    expect((await callRoute(ordersRoute, { token: other.token })).status).toBe(200);
  });

  it('a bad id is a 400 and costs no count', async () => {
    await resetLimit('orderReadUser', other.userId);
    for (let i = 0; i < 3; i++) expect((await callRoute(orderRoute, { token: other.token, params: { id: 'x' } })).status).toBe(400);
    expect(await redis.get(`rl:orderReadUser:${other.userId}`)).toBeNull();
    // …where a read that reaches the count leaves it (so the check above looks at the right key).
    expect((await callRoute(orderRoute, { token: other.token, params: { id: unknownId() } })).status).toBe(404);
    expect(await redis.get(`rl:orderReadUser:${other.userId}`)).toBe('1');
  });
});
