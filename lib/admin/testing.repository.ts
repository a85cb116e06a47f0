/** Inserts for the console tests' fixtures (users with a role, shops with an owner) and row counts. */
import type { Executor } from '@/lib/db/client';
import type { Database, Role } from '@/lib/db/schema';

export async function insertUser(db: Executor, phone: string, role: Role): Promise<string> {
  const res = await db.insertInto('tb_user').values({ phone, nick_name: `${role}_${phone.slice(-4)}`, role, password: null }).executeTakeFirstOrThrow();
  return String(res.insertId);
}

export async function insertShop(db: Executor, name: string, ownerId: string | null): Promise<string> {
  const res = await db
    .insertInto('tb_shop')
    .values({ name, type_id: '1', address: '测试路 1 号', x: 120.15, y: 30.28, avg_price: 8000, owner_id: ownerId })
    .executeTakeFirstOrThrow();
  return String(res.insertId);
}

export async function countRows(db: Executor, table: keyof Database): Promise<number> {
  const row = await db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertDeadLetter(
  db: Executor,
  d: { orderId: string | null; voucherId: string | null; userId: string | null; payload: string; reason: string; attempts: number },
): Promise<string> {
  const res = await db
    .insertInto('tb_order_dead_letter')
    .values({ order_id: d.orderId, voucher_id: d.voucherId, user_id: d.userId, payload: d.payload, reason: d.reason, attempts: d.attempts })
    .executeTakeFirstOrThrow();
  return String(res.insertId);
}
