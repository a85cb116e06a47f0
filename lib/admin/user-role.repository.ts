import type { Executor } from '@/lib/db/client';
import type { Role, User } from '@/lib/db/schema';

export function lockUserRow(trx: Executor, id: string): Promise<User | undefined> {
  return trx.selectFrom('tb_user').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function setUserRole(trx: Executor, id: string, role: Role): Promise<void> {
  await trx.updateTable('tb_user').set({ role }).where('id', '=', id).execute();
}
