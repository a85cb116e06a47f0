import type { Executor } from '@/lib/db/client';
import type { Role, User } from '@/lib/db/schema';

export function lockUserRow(trx: Executor, id: string): Promise<User | undefined> {
  return trx.selectFrom('tb_user').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/**
 * Locks the acting admin's row and the target's, lower id first: two admins changing each other
 * at once then queue on the same first row instead of each locking only the other's (which let
 * both demotions commit and left no admin), and never deadlock.
 */
export async function lockActorAndTarget(trx: Executor, actorId: string, targetId: string): Promise<{ actor?: User; target?: User }> {
  const [first, second] = BigInt(actorId) < BigInt(targetId) ? [actorId, targetId] : [targetId, actorId];
  const a = await lockUserRow(trx, first);
  const b = await lockUserRow(trx, second);
  return first === actorId ? { actor: a, target: b } : { actor: b, target: a };
}

/**
 * Admins other than `exceptId`. Not a locking read (that would lock every scanned row of the
 * table); the caller already holds the acting admin's row, which is what keeps one admin.
 */
export async function countOtherAdmins(trx: Executor, exceptId: string): Promise<number> {
  const r = await trx
    .selectFrom('tb_user')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('role', '=', 'admin')
    .where('id', '!=', exceptId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function setUserRole(trx: Executor, id: string, role: Role): Promise<void> {
  await trx.updateTable('tb_user').set({ role }).where('id', '=', id).execute();
}
