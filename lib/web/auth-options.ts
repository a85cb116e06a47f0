/**
 * next-auth (v4, JWT strategy) for browsers. The Credentials provider runs the same login as
 * `POST /api/user/login`; the JWT it signs carries nothing but the Redis session token, so the
 * Redis session stays the single source of truth (revocable, shared, sliding).
 * lib/web is the one corner of lib/ that is Next glue; the worker never imports it.
 */
import type { NextAuthOptions } from 'next-auth';
import CredentialsProvider from 'next-auth/providers/credentials';
import { ZodError } from 'zod';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { AppError } from '@/lib/errors';
import { log } from '@/lib/log';
import { login, loginInput } from '@/lib/auth/login';
import { clientIp } from '@/lib/http/client-ip';
import { authSecret, SESSION_COOKIE, SESSION_COOKIE_MAX_AGE, SESSION_COOKIE_SECURE } from '@/lib/auth/cookie';

export const authOptions: NextAuthOptions = {
  secret: authSecret,
  session: { strategy: 'jwt', maxAge: SESSION_COOKIE_MAX_AGE },
  pages: { signIn: '/login', error: '/login' },
  cookies: {
    sessionToken: {
      name: SESSION_COOKIE,
      options: { httpOnly: true, sameSite: 'lax', path: '/', secure: SESSION_COOKIE_SECURE },
    },
  },
  // next-auth warns when NEXTAUTH_URL is unset; we derive URLs from the request on purpose.
  logger: {
    warn: (code) => code !== 'NEXTAUTH_URL' && log.warn({ code }, 'next-auth warning'),
    error: (code, meta) => log.error({ code, meta }, 'next-auth error'),
    debug: () => {},
  },
  providers: [
    CredentialsProvider({
      name: 'phone',
      credentials: { phone: { type: 'text' }, code: { type: 'text' }, password: { type: 'password' } },
      async authorize(credentials, req) {
        const raw = Object.fromEntries(Object.entries(credentials ?? {}).filter(([k, v]) => ['phone', 'code', 'password'].includes(k) && v));
        try {
          const { token, user } = await login(db, redis, loginInput.parse(raw), clientIp(toHeaders(req?.headers)));
          return { id: user.id, name: user.nickName, sessionToken: token };
        } catch (e) {
          if (e instanceof AppError) throw new Error(e.message);
          if (e instanceof ZodError) throw new Error(e.issues[0]?.message ?? '输入不合法');
          log.error({ err: e }, 'browser login failed');
          throw new Error('登录失败，请稍后再试');
        }
      },
    }),
  ],
  callbacks: {
    // Keep only the session token in the JWT: no name, email or role to go stale.
    async jwt({ token, user }) {
      const sessionToken = (user as { sessionToken?: string } | undefined)?.sessionToken ?? token.sessionToken;
      return { sessionToken };
    },
    async session({ session }) {
      return { expires: session.expires };
    },
  },
};

/** next-auth hands authorize() the request headers as a plain object. */
function toHeaders(raw: Record<string, unknown> | undefined): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(raw ?? {})) if (typeof v === 'string') h.set(k, v);
  return h;
}

declare module 'next-auth/jwt' {
  interface JWT {
    sessionToken?: string;
  }
}
