/**
 * Which sales this process knows to be behind the merchant's waiting room, so a grab of one that
 * carries no token is refused without Redis (docs/fair-sale.md#the-grab-token). Learned from the
 * grab script's NO_TOKEN answer for a merchant's room: that room is set at a sale's creation and
 * never removed, so a remembered sale stays right (a room that opened by itself lapses, and is
 * never remembered here); bounded like every per-process memory.
 */
import { AppError } from '@/lib/errors';

const MAX = 10_000;
const g = globalThis as unknown as { __hmdpRoomSales?: Set<string> };
const roomSales = (g.__hmdpRoomSales ??= new Set<string>());

export function rememberRoomSale(voucherId: string): void {
  if (roomSales.size >= MAX && !roomSales.has(voucherId)) roomSales.clear();
  roomSales.add(voucherId);
}

export function isKnownRoomSale(voucherId: string): boolean {
  return roomSales.has(voucherId);
}

// One instance: a refusal is an answer, never changed once made (cheap, like the remembered ones in grab.ts).
const needTicketAnswer = new AppError('NEED_TICKET', '该秒杀需要排队，请从排队页进入抢购');
export const needTicket = (): AppError => needTicketAnswer;
