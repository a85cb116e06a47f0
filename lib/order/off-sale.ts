/**
 * Orders grabbed while MySQL says the sale was closed (taken down, window moved): Redis accepted
 * them because it had not heard of the change yet. They are never written; the worker files them
 * as dead letters at once with OFF_SALE_REASON, which the console explains to the merchant
 * (discarding gives the reserved unit back).
 */
import type { OrderMessage } from '@/lib/seckill/message';
import type { SaleWindow } from '@/lib/order/sale-window.repository';

export const OFF_SALE_REASON = 'off sale: grabbed outside the sale window MySQL holds (taken down or window changed)';

/** A grab stamped `at` (Redis time of the grab script) is inside the window, with a second of clock slack. */
export function grabbedInWindow(msg: OrderMessage, w: SaleWindow | undefined): boolean {
  if (!w) return true; // no seckill row: the stock guard decides, as before
  const SLACK_MS = 1000;
  return msg.at >= w.beginMs - SLACK_MS && msg.at <= w.endMs + SLACK_MS;
}
