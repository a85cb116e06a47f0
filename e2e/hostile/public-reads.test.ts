/**
 * Every public read that can reach MySQL is counted per client (`shopReadIp`, 300 per 10 s) before
 * it looks anything up: shops had it, while notes, profiles, a shop's notes, a user's notes and
 * follow lists let one address mint MySQL reads without end (found by a review helper).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { closeDb } from '@/lib/db/client';
import { closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { limitPoints, resetLimit } from '@/lib/rate-limit';
import { callRoute } from '@/e2e/support/helpers';
import { GET as userRoute } from '@/app/api/users/[id]/route';
import { GET as userBlogsRoute } from '@/app/api/users/[id]/blogs/route';
import { GET as followsRoute } from '@/app/api/users/[id]/follows/route';
import { GET as hotBlogsRoute } from '@/app/api/blogs/route';
import { GET as blogRoute } from '@/app/api/blogs/[id]/route';
import { GET as shopBlogsRoute } from '@/app/api/shops/[id]/blogs/route';

afterAll(async () => {
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

const unknownId = () => `9${String(Math.floor(Math.random() * 1e14)).padStart(14, '0')}`;

const routes = [
  ['GET /api/users/{id}', userRoute],
  ['GET /api/users/{id}/blogs', userBlogsRoute],
  ['GET /api/users/{id}/follows', followsRoute],
  ['GET /api/blogs', hotBlogsRoute],
  ['GET /api/blogs/{id}', blogRoute],
  ['GET /api/shops/{id}/blogs', shopBlogsRoute],
] as const;

describe('public reads per client', () => {
  it.each(routes)('%s: one address walking ids meets the limit; another address does not', async (_name, handler) => {
    const peer = `198.18.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
    await resetLimit('shopReadIp', peer);
    const allowed = limitPoints('shopReadIp');
    const read = (from: string) => callRoute(handler as Parameters<typeof callRoute>[0], { params: { id: unknownId() }, headers: { [PEER_HEADER]: from } });
    const statuses: number[] = [];
    for (let i = 0; i < allowed + 5; i += 50) statuses.push(...(await Promise.all(Array.from({ length: Math.min(50, allowed + 5 - i) }, () => read(peer)))).map((r) => r.status));
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
    expect(statuses.filter((s) => s !== 429).every((s) => s < 500)).toBe(true);
    expect((await read('198.18.251.1')).status).not.toBe(429);
    await resetLimit('shopReadIp', peer);
  });
});
