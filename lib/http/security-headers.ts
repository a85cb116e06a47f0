/**
 * The security headers of every answer, in one place, for Next (proxy.ts for pages, route.ts for
 * API answers) and for the project's own HTTP server in front of Next (its JSON answers):
 *
 *   Content-Security-Policy  pages: scripts only from us or carrying this request's nonce (Next
 *                            puts the nonce on its own inline scripts), nothing framed us
 *                            (`frame-ancestors 'none'`), no plugins, forms post only to us.
 *                            API answers: `default-src 'none'` — JSON is never a document.
 *   X-Content-Type-Options   nosniff: JSON is never run as script, uploads never as HTML
 *   Referrer-Policy          strict-origin-when-cross-origin: no paths or query leak to other sites
 *   X-Frame-Options          DENY, for browsers older than frame-ancestors
 *   Permissions-Policy       only geolocation (nearest shops), and only for us
 *   Strict-Transport-Security  when served over HTTPS (a year, subdomains)
 *
 * Pure (no Node or Next imports): any runtime can call it.
 */
export interface SecurityHeaderOptions {
  /** The request was served over HTTPS (directly or as told by the trusted proxy). */
  https: boolean;
  /** Development server: React's dev tooling needs eval. */
  dev?: boolean;
}

const COMMON = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'strict-origin-when-cross-origin',
  'X-Frame-Options': 'DENY',
  'Permissions-Policy': 'geolocation=(self), camera=(), microphone=(), payment=()',
} as const;

const HSTS = 'max-age=31536000; includeSubDomains';

/** A fresh nonce per page request (128 random bits, base64). */
export function newNonce(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}

export function pageSecurityHeaders(nonce: string, o: SecurityHeaderOptions): Record<string, string> {
  const csp = [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${o.dev ? " 'unsafe-eval'" : ''}`,
    // Tailwind and Next inject style attributes; styles cannot run code.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob: https:",
    "font-src 'self' data:",
    "connect-src 'self'",
    // The bot gate's proof of work (altcha) runs in workers it makes from a blob of its own bundled code.
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { 'Content-Security-Policy': csp, ...COMMON, ...(o.https ? { 'Strict-Transport-Security': HSTS } : {}) };
}

const API_PLAIN: Readonly<Record<string, string>> = Object.freeze({ 'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'", ...COMMON });
const API_HTTPS: Readonly<Record<string, string>> = Object.freeze({ ...API_PLAIN, 'Strict-Transport-Security': HSTS });

/** The API answer's headers: one shared, frozen object per scheme (built once, not per answer). */
export function apiSecurityHeaders(o: SecurityHeaderOptions): Readonly<Record<string, string>> {
  return o.https ? API_HTTPS : API_PLAIN;
}

/** HTTPS as seen by this server: the URL's scheme, or X-Forwarded-Proto (HSTS over plain HTTP is ignored by browsers, so a lie costs nothing). */
export function isHttps(url: string, headers: Headers): boolean {
  return url.startsWith('https:') || forwardedHttps(headers.get('x-forwarded-proto'));
}

/** X-Forwarded-Proto says HTTPS (its first value, the client's side). */
export function forwardedHttps(proto: string | string[] | null | undefined): boolean {
  return (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim() === 'https';
}

/** Adds the API headers to a Response (its headers are mutable for Response.json and new Response). */
export function withApiSecurityHeaders(res: Response, https: boolean): Response {
  for (const [k, v] of Object.entries(apiSecurityHeaders({ https }))) if (!res.headers.has(k)) res.headers.set(k, v);
  return res;
}
