import type { NextRequest } from 'next/server';
import NextAuth from 'next-auth';
import { authOptions } from '@/lib/web/auth-options';
import { isHttps, withApiSecurityHeaders } from '@/lib/http/security-headers';

type Context = { params: Promise<{ nextauth: string[] }> };
const nextAuth = NextAuth(authOptions) as (req: NextRequest, ctx: Context) => Promise<Response>;

/**
 * next-auth's own answers (session, csrf, sign-in, sign-out) do not pass through lib/http/route.ts,
 * so they get the API's security headers here, as every other API answer does (nosniff, CSP,
 * frame-ancestors). A new Response with copied headers: a redirect's own headers are immutable,
 * and every Set-Cookie is kept one by one.
 */
async function handler(req: NextRequest, ctx: Context): Promise<Response> {
  const res = await nextAuth(req, ctx);
  const headers = new Headers();
  for (const [k, v] of res.headers) if (k !== 'set-cookie') headers.append(k, v);
  for (const c of res.headers.getSetCookie()) headers.append('set-cookie', c);
  return withApiSecurityHeaders(new Response(res.body, { status: res.status, statusText: res.statusText, headers }), isHttps(req.url, req.headers));
}

export { handler as GET, handler as POST };
