/**
 * Next 16's request proxy (the former middleware), for pages only: a fresh CSP nonce per request,
 * handed to Next through the request's Content-Security-Policy header (Next puts it on its own
 * inline scripts) and sent to the browser with the other security headers
 * (lib/http/security-headers.ts). API answers get theirs in lib/http/route.ts.
 */
import { NextResponse, type NextRequest } from 'next/server';
import { env } from '@/lib/env';
import { isHttps, newNonce, pageSecurityHeaders } from '@/lib/http/security-headers';

export function proxy(req: NextRequest) {
  const nonce = newNonce();
  const headers = pageSecurityHeaders(nonce, { https: isHttps(req.url, req.headers), dev: env.NODE_ENV === 'development' });
  const forwarded = new Headers(req.headers);
  forwarded.set('content-security-policy', headers['Content-Security-Policy']!);
  const res = NextResponse.next({ request: { headers: forwarded } });
  for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
  return res;
}

export const config = {
  matcher: [{ source: '/((?!api/|_next/static|_next/image|favicon.ico).*)' }],
};
