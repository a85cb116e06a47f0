import { route } from '@/lib/http/route';
import { expectNoBody } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { consume } from '@/lib/rate-limit';
import { signIn, signStatus } from '@/lib/sign/sign.service';

/** GET /api/sign — this month's signed days and the current streak (Beijing days). */
export const GET = route({ auth: 'user' }, async ({ user }) => signStatus(db, redis, user.id));

/** POST /api/sign — sign in for today; a second sign-in the same day is a no-op (`already: true`). */
export const POST = route({ auth: 'user' }, async ({ req, user }) => {
  await consume('signUser', user.id);
  await expectNoBody(req);
  return signIn(db, redis, user.id);
});
