import type { Executor } from '@/lib/db/client';
import type { NewUser, User } from '@/lib/db/schema';

export function findUserByPhone(db: Executor, phone: string): Promise<User | undefined> {
  return db.selectFrom('tb_user').selectAll().where('phone', '=', phone).executeTakeFirst();
}

/** The user's role as MySQL has it now (undefined: no such user). */
export async function findUserRole(db: Executor, id: number | string): Promise<User['role'] | undefined> {
  return (await db.selectFrom('tb_user').select('role').where('id', '=', String(id)).executeTakeFirst())?.role;
}

/** Inserts unless the phone exists (a concurrent first login must not fail), then reads back. */
export async function insertUserIfAbsent(db: Executor, user: NewUser): Promise<User> {
  await db.insertInto('tb_user').ignore().values(user).execute();
  const row = await findUserByPhone(db, user.phone);
  if (!row) throw new Error('user row missing after insert');
  return row;
}
