/**
 * A role change whose session revocation meets Redis down: the role is committed in MySQL, the
 * answer is 503 (retry). The retry must then end the user's sessions, or a demoted merchant keeps
 * the console on the session that still says "merchant" (it slides with every request).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis, createRedis } from '@/lib/redis/client';
import { env } from '@/lib/env';
import { callRoute } from '@/e2e/support/helpers';
import { TcpProxy } from '@/e2e/support/tcp-proxy';
import { PATCH as roleRoute } from '@/app/api/admin/users/[id]/route';
import { GET as listVouchersRoute } from '@/app/api/admin/vouchers/route';
import { changeUserRole } from '@/lib/admin/user-role';
import { touchSession } from '@/lib/auth/session';
import { createConsoleFixture, type ConsoleFixture } from '@/e2e/support/fixtures/admin';

let f: ConsoleFixture;
// Port 0: a free one, so this file collides with no other suite's ports.
const proxy = new TcpProxy(0, Number(new URL(env.REDIS_URL).port || 6379));

beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
  await proxy.start();
});
afterAll(async () => {
  await proxy.close();
  await Promise.all([closeDb(), closeRedis()]);
});

const roleOf = async (id: string) => (await db.selectFrom('tb_user').select('role').where('id', '=', id).executeTakeFirstOrThrow()).role;

describe('a role change retried after Redis failed', () => {
  it('the retry ends the sessions the failed call could not', async () => {
    const merchant = f.merchantB;
    expect((await callRoute(listVouchersRoute, { token: merchant.token })).status).toBe(200);

    const url = new URL(env.REDIS_URL);
    url.port = String(proxy.port);
    const cutRedis = createRedis(url.toString(), { maxRetriesPerRequest: 1, connectTimeout: 300, retryStrategy: () => 200 });
    try {
      await proxy.cut();
      // The admin's first click: MySQL commits the demotion, the revocation cannot reach Redis (a 503 at the route).
      await expect(changeUserRole(db, cutRedis, { id: f.admin.id, role: 'admin' }, merchant.id, { role: 'user' })).rejects.toThrow();
    } finally {
      await proxy.restore();
      cutRedis.disconnect();
    }
    expect(await roleOf(merchant.id)).toBe('user');
    expect(await touchSession(redis, merchant.token)).toMatchObject({ role: 'merchant' });

    // The retry the 503 asked for.
    const retry = await callRoute(roleRoute, { method: 'PATCH', token: f.admin.token, params: { id: merchant.id }, body: { role: 'user' } });
    expect(retry.status).toBe(200);
    expect(retry.json.data).toMatchObject({ role: 'user', changed: false, revokedSessions: 1 });
    expect(await touchSession(redis, merchant.token)).toBeNull();
    expect((await callRoute(listVouchersRoute, { token: merchant.token })).status).toBe(401);
  });

  it('a no-op change ends no session that already has the role', async () => {
    const merchant = f.merchantA;
    const r = await callRoute(roleRoute, { method: 'PATCH', token: f.admin.token, params: { id: merchant.id }, body: { role: 'merchant' } });
    expect(r.json.data).toMatchObject({ changed: false, revokedSessions: 0 });
    expect((await callRoute(listVouchersRoute, { token: merchant.token })).status).toBe(200);
  });
});
