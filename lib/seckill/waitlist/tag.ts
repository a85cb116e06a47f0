/**
 * Where a user's waitlist keys live (docs/fair-sale.md#waitlist): in their home bucket's hash tag,
 * like every per-user set of a sale, so the return, claim and join scripts each stay in one slot.
 * With one bucket (today) the home bucket is bucket 0, whose tag is the voucher id.
 */
import { keys } from '@/lib/redis/keys';

export const waitTag = (voucherId: string): string => voucherId;

export function waitKeys(voucherId: string) {
  const t = waitTag(voucherId);
  return { waitlist: keys.seckillWaitlist(t), offers: keys.seckillOffers(t), stats: keys.seckillWaitStats(t), lapsed: keys.seckillWaitLapsed(t) };
}
