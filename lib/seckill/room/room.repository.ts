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

export interface RoomSaleRow {
  voucherId: string;
  shopId: string;
  title: string;
  beginTime: Date;
  endTime: Date;
}

/** A room sale as its waiting page shows it; undefined when the voucher is not one. */
export async function findRoomSale(db: Executor, voucherId: string): Promise<RoomSaleRow | undefined> {
  const r = await db
    .selectFrom('tb_seckill_room as r')
    .innerJoin('tb_seckill_voucher as s', 's.voucher_id', 'r.voucher_id')
    .innerJoin('tb_voucher as v', 'v.id', 'r.voucher_id')
    .select(['r.voucher_id', 'v.shop_id', 'v.title', 's.begin_time', 's.end_time'])
    .where('r.voucher_id', '=', voucherId)
    .executeTakeFirst();
  return r && { voucherId: String(r.voucher_id), shopId: String(r.shop_id), title: r.title, beginTime: r.begin_time, endTime: r.end_time };
}
