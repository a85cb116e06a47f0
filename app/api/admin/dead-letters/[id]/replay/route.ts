import { route } from '@/lib/http/route';
import { expectNoBody, parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { replayDeadLetter } from '@/lib/admin/dead-letters';

/** Publishes the order again; idempotent (a second replay changes nothing). */
export const POST = route({ auth: 'merchant' }, async ({ req, params, user }) => {
  const id = parseId(params.id);
  await expectNoBody(req);
  return replayDeadLetter(db, user, id);
});
