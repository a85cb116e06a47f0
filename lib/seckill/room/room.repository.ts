/** SQL for tb_seckill_room (migration 010_waiting_room.sql, docs/fair-sale.md#the-waiting-room). */
import type { Executor } from '@/lib/db/client';

export interface RoomRow {
  voucherId: string;
  /** The bot gate's altcha maxnumber. */
  powCost: number;
}

export async function findRoom(db: Executor, voucherId: string): Promise<RoomRow | undefined> {
  const r = await db.selectFrom('tb_seckill_room').select(['voucher_id', 'pow_cost']).where('voucher_id', '=', voucherId).executeTakeFirst();
  return r && { voucherId: r.voucher_id, powCost: Number(r.pow_cost) };
}

export async function insertRoom(trx: Executor, r: RoomRow): Promise<void> {
  await trx.insertInto('tb_seckill_room').values({ voucher_id: r.voucherId, pow_cost: r.powCost }).execute();
}
