/**
 * The console's view of money the books still owe (admin only: it spans every shop): refunds the
 * provider has not confirmed and charges not settled, with their totals. The worker's reconciler
 * (lib/payment/reconcile.ts) works through them; this list is what is left.
 */
import { z } from 'zod';
import type { DB } from '@/lib/db/client';
import { assertAdmin, type Actor } from '@/lib/access/access';
import { listOwedAttempts, owedSummary } from '@/lib/payment/payment.repository';

export const owedPaymentsQuery = z.object({
  page: z.coerce.number().int().min(1).max(10_000).default(1),
  size: z.coerce.number().int().min(1).max(100).default(50),
});

export interface OwedPaymentItem {
  id: string;
  kind: 'charge' | 'refund';
  orderId: string;
  userId: string;
  amount: number;
  status: string;
  txnId: string | null;
  tries: number;
  lastError: string | null;
  createTime: string;
  updateTime: string;
}

export async function owedPayments(db: DB, actor: Actor, q: z.infer<typeof owedPaymentsQuery>) {
  assertAdmin(actor);
  const [rows, summary] = await Promise.all([listOwedAttempts(db, (q.page - 1) * q.size, q.size + 1), owedSummary(db)]);
  const items: OwedPaymentItem[] = rows.slice(0, q.size).map((a) => ({
    id: a.id,
    kind: a.kind,
    orderId: a.orderId,
    userId: a.userId,
    amount: a.amount,
    status: a.status,
    txnId: a.txnId,
    tries: a.tries,
    lastError: a.lastError,
    createTime: a.createTime.toISOString(),
    updateTime: a.updateTime.toISOString(),
  }));
  return { summary, items, page: q.page, hasMore: rows.length > q.size };
}
