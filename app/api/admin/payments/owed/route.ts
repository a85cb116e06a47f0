import { route } from '@/lib/http/route';
import { parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { owedPayments, owedPaymentsQuery } from '@/lib/admin/payments';

/** Admin only: refunds not confirmed by the provider and charges not settled, with totals. */
export const GET = route({ auth: 'admin' }, async ({ req, user }) => owedPayments(db, user, parseQuery(req, owedPaymentsQuery)));
