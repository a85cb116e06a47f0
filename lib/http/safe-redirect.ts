/**
 * Where a `?next=` may send a visitor after login: only a path of this very site. The value is
 * resolved the way a browser resolves it (the WHATWG URL parser) against a placeholder origin and
 * refused unless it stays on that origin; backslashes and control characters are refused outright
 * because browsers read `\` as `/` and drop tabs and newlines (`/\evil.example`, `/%09/evil.example`
 * both leave the site otherwise). Pure, so the login page and the login form share it.
 */
const PLACEHOLDER = 'http://hmdp.invalid';
const MAX_LENGTH = 2048;

export function sameOriginPath(raw: unknown, fallback = '/'): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_LENGTH) return fallback;
  if (/[\\\u0000-\u001f\u007f]/.test(raw) || !raw.startsWith('/') || raw.startsWith('//')) return fallback;
  let url: URL;
  try {
    url = new URL(raw, PLACEHOLDER);
  } catch {
    return fallback;
  }
  if (url.origin !== PLACEHOLDER) return fallback;
  const path = url.pathname + url.search + url.hash;
  // Dot segments can collapse into `//host` (`/.//evil`), which a browser reads as another site.
  return path.startsWith('//') ? fallback : path;
}
