import { route } from '@/lib/http/route';
import { parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { replayDeadLetter } from '@/lib/admin/dead-letters';

/** Publishes the order again; idempotent (a second replay changes nothing). */
export const POST = route({ auth: 'merchant' }, async ({ params, user }) => replayDeadLetter(db, user, parseId(params.id)));
