/**
 * Changing a user's role (admin only). The session carries the role it was created with, so every
 * live session of that user with another role is revoked after the change commits (and again by a
 * retry, should Redis have failed the first time): the next request logs in afresh
 * and gets the new role — a demoted merchant keeps no console access, a promoted user must then
 * log in with a password. Audited as user.role-change. The acting admin's row and the target's are
 * locked in one transaction, which also checks that the actor is still an admin and that the last
 * admin is never removed, so two admins demoting each other at once leave one admin, not none.
 */
import { z } from 'zod';
import type { DB } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { AppError, notFound } from '@/lib/errors';
import { recordAudit } from '@/lib/audit/audit';
import { assertAdmin, type Actor } from '@/lib/access/access';
import { revokeSessionsNotOfRole } from '@/lib/auth/session';
import { countOtherAdmins, lockActorAndTarget, setUserRole } from '@/lib/admin/user-role.repository';
import { findUserByPhone } from '@/lib/auth/user.repository';
import type { Executor } from '@/lib/db/client';

export const roleChangeInput = z.object({ role: z.enum(['user', 'merchant', 'admin']) }).strict();

export async function changeUserRole(db: DB, redis: RedisClient, actor: Actor, userId: string, input: z.infer<typeof roleChangeInput>) {
  assertAdmin(actor);
  if (userId === actor.id) throw new AppError('CONFLICT', '不能修改自己的角色');
  const before = await db.transaction().execute(async (trx) => {
    const { actor: me, target: row } = await lockActorAndTarget(trx, actor.id, userId);
    if (!row) throw notFound('用户');
    // The session's role was read before this transaction: another admin may have demoted the
    // actor meanwhile, and a demoted admin's request must not still demote someone else.
    if (me?.role !== 'admin') throw new AppError('FORBIDDEN', '需要管理员权限');
    // The last admin can never be removed (the console would have nobody left to manage it).
    if (row.role === 'admin' && input.role !== 'admin' && (await countOtherAdmins(trx, userId)) === 0) {
      throw new AppError('CONFLICT', '不能移除最后一位管理员');
    }
    if (row.role !== input.role) {
      await setUserRole(trx, userId, input.role);
      await recordAudit(trx, { actorId: actor.id, action: 'user.role-change', targetType: 'user', targetId: userId, before: { role: row.role }, after: { role: input.role } });
    }
    return row.role;
  });
  // Even when MySQL already had the role: this may be the retry of a change whose revocation failed.
  const revoked = await revokeSessionsNotOfRole(redis, userId, input.role);
  return { id: userId, role: input.role, changed: before !== input.role, revokedSessions: revoked };
}

export interface UserRoleView {
  id: string;
  phone: string;
  nickName: string;
  role: 'user' | 'merchant' | 'admin';
}

/** The console's user lookup by phone (admin only); null when nobody has that phone. */
export async function findUserForRoleChange(db: Executor, actor: Actor, phone: string): Promise<UserRoleView | null> {
  assertAdmin(actor);
  const u = await findUserByPhone(db, phone);
  return u ? { id: String(u.id), phone: u.phone, nickName: u.nick_name, role: u.role } : null;
}
