import type { Executor } from '@/lib/db/client';

export async function insertSign(db: Executor, userId: string, isoDate: string): Promise<boolean> {
  const r = await db.insertInto('tb_sign').ignore().values({ user_id: userId, sign_date: isoDate }).executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** The days (1..31) a user signed in during one month, from the table the bitmaps are rebuilt from. */
export async function signedDaysOfMonth(db: Executor, userId: string, year: number, month: number): Promise<number[]> {
  const mm = String(month).padStart(2, '0');
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const rows = await db
    .selectFrom('tb_sign')
    .select('sign_date')
    .where('user_id', '=', userId)
    .where('sign_date', '>=', `${year}-${mm}-01` as never)
    .where('sign_date', '<=', `${year}-${mm}-${last}` as never)
    .execute();
  return rows.map((r) => new Date(r.sign_date).getUTCDate());
}
