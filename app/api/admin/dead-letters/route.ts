import { route } from '@/lib/http/route';
import { parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { listDeadLetters, listDeadLettersQuery } from '@/lib/admin/dead-letters';

/** Dead order messages of the caller's vouchers (all, for an admin), with reason and attempts. */
export const GET = route({ auth: 'merchant' }, async ({ req, user }) => listDeadLetters(db, user, parseQuery(req, listDeadLettersQuery)));
