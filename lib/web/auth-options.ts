/**
 * next-auth (v4, JWT strategy) for browsers. The Credentials provider runs the same login as
 * `POST /api/user/login`; the JWT it signs carries nothing but the Redis session token, so the
 * Redis session stays the single source of truth (revocable, shared, sliding).
 * lib/web is the one corner of lib/ that is Next glue; the worker never imports it.
 */
import type { NextAuthOptions } from 'next-auth';
import CredentialsProvider from 'next-auth/providers/credentials';
import { cookies } from 'next/headers';
import { ZodError } from 'zod';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { AppError } from '@/lib/errors';
import { log } from '@/lib/log';
import { login, loginInput } from '@/lib/auth/login';
import { clientIp } from '@/lib/http/client-ip';
import { authSecret, SESSION_COOKIE, SESSION_COOKIE_MAX_AGE, SESSION_COOKIE_SECURE } from '@/lib/auth/cookie';
import { LOGIN_DEVICE_COOKIE, LOGIN_DEVICE_MAX_AGE_SECONDS, presentedLoginDevice } from '@/lib/auth/login-device';

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
          const headers = toHeaders(req?.headers);
          const { token, user, deviceToken } = await login(db, redis, loginInput.parse(raw), clientIp(headers), presentedLoginDevice(headers));
          if (deviceToken) await rememberLoginDevice(deviceToken);
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

/**
 * The login-device cookie (lib/auth/login-device.ts) on the sign-in answer. authorize() runs inside
 * the route handler's request, whose cookie store Next merges into the answer. A failure here
 * costs only the exemption from the phone's global ceiling, never the login.
 */
async function rememberLoginDevice(token: string): Promise<void> {
  try {
    (await cookies()).set(LOGIN_DEVICE_COOKIE, token, { httpOnly: true, sameSite: 'lax', path: '/', secure: SESSION_COOKIE_SECURE, maxAge: LOGIN_DEVICE_MAX_AGE_SECONDS });
  } catch (err) {
    log.warn({ err: err instanceof Error ? err.message : String(err) }, 'login-device cookie could not be set');
  }
}

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
