import { route } from '@/lib/http/route';
import { parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { listAuditLog, listAuditQuery } from '@/lib/audit/audit';

/** Admin actions, newest first: all for an admin, a merchant's own and those on its shops. */
export const GET = route({ auth: 'merchant' }, async ({ req, user }) => listAuditLog(db, user, parseQuery(req, listAuditQuery)));
