/**
 * Role changes under concurrency: admins demoting each other at the same moment must leave an
 * admin behind (the actor's role is re-read under lock in the change's transaction).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { changeUserRole } from '@/lib/admin/user-role';
import { AppError } from '@/lib/errors';
import { randomPhone } from '@/e2e/support/helpers';

afterAll(async () => {
  await closeDb();
  await closeRedis();
});

async function newAdmin(): Promise<string> {
  const phone = randomPhone();
  await db.insertInto('tb_user').values({ phone, nick_name: 'role-race', role: 'admin', password: null }).execute();
  return String((await db.selectFrom('tb_user').select('id').where('phone', '=', phone).executeTakeFirstOrThrow()).id);
}

const roleOf = async (id: string) => (await db.selectFrom('tb_user').select('role').where('id', '=', id).executeTakeFirstOrThrow()).role;

describe('concurrent demotions', () => {
  it('two admins demoting each other at once: exactly one wins, the other stays admin (20 pairs at once)', async () => {
    const pairs = await Promise.all(Array.from({ length: 20 }, async () => [await newAdmin(), await newAdmin()] as const));
    const outcomes = await Promise.all(
      pairs.map(([a, b]) =>
        Promise.allSettled([
          changeUserRole(db, redis, { id: a, role: 'admin' }, b, { role: 'user' }),
          changeUserRole(db, redis, { id: b, role: 'admin' }, a, { role: 'user' }),
        ]),
      ),
    );
    for (const [i, [a, b]] of pairs.entries()) {
      const roles = [await roleOf(a), await roleOf(b)];
      expect(roles.filter((r) => r === 'admin'), `pair ${i}`).toHaveLength(1);
      const res = outcomes[i]!;
      expect(res.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const refused = res.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(refused.reason).toBeInstanceOf(AppError);
      expect((refused.reason as AppError).code).toBe('FORBIDDEN');
    }
  });

  it('a ring of admins each demoting the next at once leaves at least one admin', async () => {
    const ring = await Promise.all(Array.from({ length: 6 }, () => newAdmin()));
    await Promise.allSettled(ring.map((a, i) => changeUserRole(db, redis, { id: a, role: 'admin' }, ring[(i + 1) % ring.length]!, { role: 'merchant' })));
    const roles = await Promise.all(ring.map(roleOf));
    expect(roles.filter((r) => r === 'admin').length).toBeGreaterThanOrEqual(1);
  });

  it('an admin who was demoted meanwhile (a stale session) cannot change anyone', async () => {
    const [a, b, c] = [await newAdmin(), await newAdmin(), await newAdmin()];
    await changeUserRole(db, redis, { id: a, role: 'admin' }, b, { role: 'user' });
    await expect(changeUserRole(db, redis, { id: b, role: 'admin' }, c, { role: 'user' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(await roleOf(c)).toBe('admin');
  });
});
