/**
 * No open redirect after login (proof suite): every known spelling that makes a browser leave the
 * site is turned into "/", checked with the same URL parser browsers use, and the ordinary
 * same-site paths (with query and hash) survive unchanged.
 */
import { describe, expect, it } from 'vitest';
import { sameOriginPath } from '@/lib/http/safe-redirect';

const SITE = 'https://hmdp.example';

/** Values as the page receives them (query already percent-decoded once by the framework). */
const BYPASSES = [
  '//evil.example', '///evil.example', '////evil.example', '/\\evil.example', '\\/evil.example', '\\\\evil.example',
  '/\t/evil.example', '/\n/evil.example', '/\r\n/evil.example', '/%5Cevil.example'.replace('%5C', '\\'),
  '/%09/evil.example'.replace('%09', '\t'), '/.//evil.example', '/./\\evil.example', '/x/..//evil.example',
  'https://evil.example', 'http:evil.example', 'https:/evil.example', 'javascript:alert(1)', 'JaVaScRiPt:alert(1)',
  'data:text/html,<script>alert(1)</script>', ' //evil.example', '\u0000//evil.example', '/\u0000/evil.example',
  'evil.example', '.evil.example', '@evil.example', '%2F%2Fevil.example', '/' + 'a'.repeat(5000),
  '/\u3000/evil.example', '/\uff0fevil.example'.replace('\uff0f', '/\uff0f'),
];

describe('sameOriginPath', () => {
  it.each(BYPASSES)('%j stays on the site', (raw) => {
    const out = sameOriginPath(raw);
    expect(new URL(out, `${SITE}/login`).origin).toBe(SITE);
    expect(out.startsWith('/') && !out.startsWith('//')).toBe(true);
  });

  it('the classic bypasses fall back to the home page', () => {
    for (const raw of ['//evil.example', '/\\evil.example', '/\t/evil.example', 'https://evil.example', '/.//evil.example']) {
      expect(sameOriginPath(raw), JSON.stringify(raw)).toBe('/');
    }
  });

  it('keeps ordinary same-site paths', () => {
    for (const p of ['/', '/admin/vouchers?status=live', '/shops/12#vouchers', '/admin/vouchers/5/live', '/types/1?page=2&x=120.1']) {
      expect(sameOriginPath(p)).toBe(p);
    }
  });

  it('non-strings are the home page', () => {
    for (const v of [undefined, null, ['/a', '/b'], 42, {}]) expect(sameOriginPath(v)).toBe('/');
  });
});
