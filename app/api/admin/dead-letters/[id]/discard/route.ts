import { route } from '@/lib/http/route';
import { expectNoBody, parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { discardDeadLetter } from '@/lib/admin/dead-letters';
import { consume } from '@/lib/rate-limit';

export const POST = route({ auth: 'merchant' }, async ({ req, params, user }) => {
  await consume('consoleWriteUser', user.id);
  const id = parseId(params.id);
  await expectNoBody(req);
  return discardDeadLetter(db, user, id);
});
