/** SQL for tb_order_dead_letter as the console sees it, scoped to a merchant's shops when asked. */
import type { Executor } from '@/lib/db/client';

export type DeadLetterStatus = 'dead' | 'replayed' | 'discarded';

export interface DeadLetterRow {
  id: string;
  order_id: string | null;
  voucher_id: string | null;
  user_id: string | null;
  payload: string;
  reason: string;
  attempts: number;
  status: DeadLetterStatus;
  create_time: Date;
  update_time: Date;
  voucher_title: string | null;
  owner_id: string | null;
}

export interface DeadLetterFilter {
  /** Only dead letters of vouchers in this merchant's shops (unparseable ones have no voucher: admin only). */
  ownerId?: string;
  status?: DeadLetterStatus;
  voucherId?: string;
  afterId?: string;
  limit: number;
  offset?: number;
}

function base(db: Executor) {
  return db
    .selectFrom('tb_order_dead_letter as d')
    .leftJoin('tb_voucher as v', 'v.id', 'd.voucher_id')
    .leftJoin('tb_shop as s', 's.id', 'v.shop_id')
    .select([
      'd.id', 'd.order_id', 'd.voucher_id', 'd.user_id', 'd.payload', 'd.reason', 'd.attempts', 'd.status',
      'd.create_time', 'd.update_time', 'v.title as voucher_title', 's.owner_id',
    ]);
}

export async function listDeadLetterRows(db: Executor, f: DeadLetterFilter): Promise<DeadLetterRow[]> {
  let q = base(db).orderBy('d.id', f.afterId ? 'asc' : 'desc').limit(f.limit);
  if (f.offset) q = q.offset(f.offset);
  if (f.ownerId !== undefined) q = q.where('s.owner_id', '=', f.ownerId);
  if (f.status) q = q.where('d.status', '=', f.status);
  if (f.voucherId) q = q.where('d.voucher_id', '=', f.voucherId);
  if (f.afterId) q = q.where('d.id', '>', f.afterId);
  return q.execute();
}

export async function countDeadLetters(db: Executor, f: Pick<DeadLetterFilter, 'ownerId' | 'status' | 'voucherId'>): Promise<number> {
  let q = db
    .selectFrom('tb_order_dead_letter as d')
    .leftJoin('tb_voucher as v', 'v.id', 'd.voucher_id')
    .leftJoin('tb_shop as s', 's.id', 'v.shop_id')
    .select((eb) => eb.fn.countAll<string>().as('n'));
  if (f.ownerId !== undefined) q = q.where('s.owner_id', '=', f.ownerId);
  if (f.status) q = q.where('d.status', '=', f.status);
  if (f.voucherId) q = q.where('d.voucher_id', '=', f.voucherId);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/** The row locked for a replay/discard decision, so two clicks never act twice. */
export async function lockDeadLetterRow(trx: Executor, id: string): Promise<DeadLetterRow | undefined> {
  await trx.selectFrom('tb_order_dead_letter').select('id').where('id', '=', id).forUpdate().execute();
  return base(trx).where('d.id', '=', id).executeTakeFirst();
}

export async function setDeadLetterStatus(trx: Executor, id: string, status: 'replayed' | 'discarded'): Promise<void> {
  await trx.updateTable('tb_order_dead_letter').set({ status }).where('id', '=', id).where('status', '=', 'dead').execute();
}
