/**
 * The shop page (app/(shop)/shops/[id]/page.tsx) counts its lookup on the client's public-read
 * limit (shopReadIp) before it looks the id up: a page for an unknown id costs a MySQL read and a
 * marker in Redis, so one client cannot mint them without end. The page is rendered as Next calls
 * it; the request's headers (the peer address the web server writes) stand in for Next's.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';

const request = vi.hoisted(() => ({ peer: '' }));
vi.mock('next/headers', () => ({
  headers: async () => new Headers({ 'x-hmdp-peer': request.peer }),
  cookies: async () => ({ get: () => undefined }),
}));

import { isValidElement } from 'react';
import { closeDb } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { closeLocks } from '@/lib/lock';
import { keys } from '@/lib/redis/keys';
import { resetLimit } from '@/lib/rate-limit';

afterAll(async () => {
  await closeDb();
  await closeLocks();
  await closeRedis();
});

describe('the shop page', () => {
  it('one client\'s pages for unknown ids stop at the public-read limit, before the lookup: no marker past it', async () => {
    request.peer = `203.0.113.${1 + Math.floor(Math.random() * 250)}`;
    await resetLimit('shopReadIp', request.peer);
    const page = await import('@/app/(shop)/shops/[id]/page');
    const base = 7_000_000_000_000 + Math.floor(Math.random() * 1e9);
    const titles: unknown[] = [];
    for (let i = 0; i < 320; i += 40) {
      const batch = Array.from({ length: 40 }, (_, j) => page.generateMetadata({ params: Promise.resolve({ id: String(base + i + j) }) }));
      titles.push(...(await Promise.all(batch)).map((m) => m.title));
    }
    let markers = 0;
    for (let i = 0; i < 320; i++) markers += await redis.exists(keys.shop(String(base + i)));
    expect(titles.filter((t) => t === '访问太频繁')).toHaveLength(20);
    expect(markers).toBe(300);
    // Over the limit, the page itself says so and looks nothing up.
    const over = await page.default({ params: Promise.resolve({ id: String(base + 999) }) });
    expect(isValidElement(over) && (over.props as { 'data-testid'?: string })['data-testid']).toBe('too-many');
    expect(await redis.exists(keys.shop(String(base + 999)))).toBe(0);
    await resetLimit('shopReadIp', request.peer);
  });
});
