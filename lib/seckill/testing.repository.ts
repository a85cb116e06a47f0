/** SQL behind lib/seckill/testing.ts. */
import type { Executor } from '@/lib/db/client';

export async function insertUsersIgnoringPhones(db: Executor, phones: string[]): Promise<{ id: string; phone: string; nickName: string }[]> {
  const out: { id: string; phone: string; nickName: string }[] = [];
  for (let i = 0; i < phones.length; i += 1000) {
    const chunk = phones.slice(i, i + 1000);
    await db
      .insertInto('tb_user')
      .ignore()
      .values(chunk.map((phone) => ({ phone, nick_name: `user_t${phone.slice(-6)}` })))
      .execute();
    const rows = await db.selectFrom('tb_user').select(['id', 'phone', 'nick_name']).where('phone', 'in', chunk).execute();
    out.push(...rows.map((r) => ({ id: r.id, phone: r.phone, nickName: r.nick_name })));
  }
  return out;
}
