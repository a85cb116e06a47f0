/** SQL for tb_audit_log: append-only, newest first. */
import type { Executor } from '@/lib/db/client';
import type { Insertable, Selectable } from 'kysely';
import type { AuditLogTable } from '@/lib/db/schema';

export type AuditRow = Selectable<AuditLogTable>;

export async function insertAuditRow(db: Executor, row: Insertable<AuditLogTable>): Promise<void> {
  await db.insertInto('tb_audit_log').values(row).execute();
}

export interface AuditQuery {
  /** Only rows visible to this merchant: its own actions and actions on its shops or their vouchers. */
  merchantId?: string;
  targetType?: string;
  targetId?: string;
  /** Rows with id below this (keyset paging, newest first). */
  beforeId?: string;
  limit: number;
}

export async function listAuditRows(db: Executor, q: AuditQuery): Promise<(AuditRow & { actor_name: string | null })[]> {
  let query = db
    .selectFrom('tb_audit_log as a')
    .leftJoin('tb_user as u', 'u.id', 'a.actor_id')
    .selectAll('a')
    .select('u.nick_name as actor_name')
    .orderBy('a.id', 'desc')
    .limit(q.limit);
  if (q.targetType) query = query.where('a.target_type', '=', q.targetType);
  if (q.targetId) query = query.where('a.target_id', '=', q.targetId);
  if (q.beforeId) query = query.where('a.id', '<', q.beforeId);
  const merchantId = q.merchantId;
  if (merchantId) {
    query = query.where((eb) =>
      eb.or([
        eb('a.actor_id', '=', merchantId),
        eb.and([
          eb('a.target_type', '=', 'shop'),
          eb('a.target_id', 'in', eb.selectFrom('tb_shop').select((sb) => sb.cast<string>('id', 'char').as('id')).where('owner_id', '=', merchantId)),
        ]),
        eb.and([
          eb('a.target_type', '=', 'voucher'),
          eb(
            'a.target_id',
            'in',
            eb
              .selectFrom('tb_voucher as v')
              .innerJoin('tb_shop as s', 's.id', 'v.shop_id')
              .select((sb) => sb.cast<string>('v.id', 'char').as('id'))
              .where('s.owner_id', '=', merchantId),
          ),
        ]),
      ]),
    );
  }
  return query.execute();
}
