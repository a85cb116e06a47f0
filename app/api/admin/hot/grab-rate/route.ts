import { route } from '@/lib/http/route';
import { readGrabRate } from '@/lib/hot/grab-rate';

export const dynamic = 'force-dynamic';

/** Grab requests per second by outcome, all vouchers, over the last few seconds (admin only: it is every shop's traffic). */
export const GET = route({ auth: 'admin' }, async () => readGrabRate());
