/**
 * The audit trail of admin actions (who, what, when, before → after). `recordAudit` runs inside
 * the caller's transaction, so an action and its audit row commit or roll back together.
 */
import { z } from 'zod';
import type { Executor } from '@/lib/db/client';
import { ownerScope, type Actor } from '@/lib/access/access';
import { insertAuditRow, listAuditRows, type AuditQuery } from '@/lib/audit/audit.repository';

export interface AuditEntry {
  actorId: string;
  /** `<target>.<verb>`, e.g. voucher.create, voucher.preheat, shop.update, dead-letter.replay. */
  action: string;
  targetType: string;
  targetId: string;
  before: unknown;
  after: unknown;
}

/** Serialises snapshots as JSON (BigInt → string, Date → ISO); undefined/null stores NULL. */
function snapshot(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

export async function recordAudit(trx: Executor, entry: AuditEntry): Promise<void> {
  await insertAuditRow(trx, {
    actor_id: entry.actorId,
    action: entry.action.slice(0, 64),
    target_type: entry.targetType.slice(0, 32),
    target_id: entry.targetId.slice(0, 64),
    before_json: snapshot(entry.before),
    after_json: snapshot(entry.after),
  });
}

export interface AuditView {
  id: string;
  actorId: string;
  actorName: string | null;
  action: string;
  targetType: string;
  targetId: string;
  before: unknown;
  after: unknown;
  at: string;
}

function parse(json: string | null): unknown {
  if (json === null) return null;
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}

export async function listAudit(db: Executor, q: AuditQuery): Promise<AuditView[]> {
  const rows = await listAuditRows(db, q);
  return rows.map((r) => ({
    id: String(r.id),
    actorId: String(r.actor_id),
    actorName: r.actor_name,
    action: r.action,
    targetType: r.target_type,
    targetId: r.target_id,
    before: parse(r.before_json),
    after: parse(r.after_json),
    at: r.create_time.toISOString(),
  }));
}

export const listAuditQuery = z
  .object({
    targetType: z.enum(['voucher', 'shop', 'dead-letter']).optional(),
    targetId: z.string().regex(/^[1-9]\d{0,18}$/, 'targetId 不合法').optional(),
    /** Keyset paging: rows older than this id. */
    before: z.string().regex(/^[1-9]\d{0,18}$/, 'before 不合法').optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  })
  .strict();

/** The audit log as a console user may see it: everything for an admin, a merchant's own scope. */
export async function listAuditLog(db: Executor, actor: Actor, q: z.infer<typeof listAuditQuery>): Promise<{ items: AuditView[]; nextBefore: string | null }> {
  const items = await listAudit(db, { merchantId: ownerScope(actor), targetType: q.targetType, targetId: q.targetId, beforeId: q.before, limit: q.limit });
  return { items, nextBefore: items.length === q.limit ? items[items.length - 1]!.id : null };
}
