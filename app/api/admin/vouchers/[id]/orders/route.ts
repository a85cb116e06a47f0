import { route } from '@/lib/http/route';
import { parseId, parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { voucherOrders, voucherOrdersQuery } from '@/lib/admin/merchant-orders';

export const dynamic = 'force-dynamic';

/** A voucher's orders (newest first, `?status=1..6` filters) and its counts per state. */
export const GET = route({ auth: 'merchant' }, async ({ req, params, user }) => voucherOrders(db, user, parseId(params.id), parseQuery(req, voucherOrdersQuery)));
