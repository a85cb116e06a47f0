import { route } from '@/lib/http/route';
import { expectNoBody } from '@/lib/http/parse';
import { json } from '@/lib/http/respond';
import { redis } from '@/lib/redis/client';
import { revokeSession } from '@/lib/auth/session';
import { SESSION_COOKIE, SESSION_COOKIE_SECURE } from '@/lib/auth/cookie';

/** Revokes the Redis session (every instance sees it at once) and clears the browser cookie. */
export const POST = route({ auth: 'user' }, async ({ req, caller }) => {
  await expectNoBody(req);
  await revokeSession(redis, caller!.token);
  const res = json({ loggedOut: true });
  const secure = SESSION_COOKIE_SECURE ? '; Secure' : '';
  res.headers.append('Set-Cookie', `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${secure}`);
  return res;
});
