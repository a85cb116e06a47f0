import { route } from '@/lib/http/route';
import { parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { discardDeadLetter } from '@/lib/admin/dead-letters';

export const POST = route({ auth: 'merchant' }, async ({ params, user }) => discardDeadLetter(db, user, parseId(params.id)));
