/**
 * The console's live-stock stream (proof suite): it ends within about a second of logout, and a
 * user holds at most MAX_STREAMS_PER_USER streams at once (a closed one frees its slot).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { createSession, revokeSession } from '@/lib/auth/session';
import { callRoute } from '@/e2e/support/helpers';
import { createConsoleFixture, seckillBody, type ConsoleFixture } from '@/e2e/support/fixtures/admin';
import { MAX_STREAMS_PER_USER } from '@/lib/admin/stream-slots';
import { keys } from '@/lib/redis/keys';
import { POST as createRoute } from '@/app/api/admin/vouchers/route';
import { GET as streamRoute } from '@/app/api/admin/vouchers/[id]/stock/stream/route';

let f: ConsoleFixture;
let voucherId: string;

beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
  voucherId = (await callRoute(createRoute, { token: f.merchantA.token, body: seckillBody(f.shopA, { stock: 5 }) })).json.data.id;
});
afterAll(async () => {
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

function open(token: string, signal?: AbortSignal) {
  const req = new Request(`http://localhost:3000/api/admin/vouchers/${voucherId}/stock/stream`, { headers: { authorization: `Bearer ${token}` }, signal });
  return streamRoute(req, { params: Promise.resolve({ id: voucherId }) });
}

/** Reads the stream to its end (or `ms`), returning the text and whether it ended by itself. */
async function drain(res: Response, ms: number): Promise<{ text: string; ended: boolean }> {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const r = await Promise.race([reader.read(), new Promise<null>((ok) => setTimeout(() => ok(null), deadline - Date.now()))]);
    if (r === null) break;
    if (r.done) return { text, ended: true };
    text += dec.decode(r.value);
  }
  await reader.cancel();
  return { text, ended: false };
}

describe('live-stock stream', () => {
  it('ends within about a second of logout', async () => {
    const token = await createSession(redis, { id: f.merchantA.id, nickName: 'm', icon: '', role: 'merchant' });
    const res = await open(token);
    expect(res.status).toBe(200);
    setTimeout(() => void revokeSession(redis, token), 1200);
    const started = Date.now();
    const { text, ended } = await drain(res, 6000);
    expect(ended).toBe(true);
    expect(Date.now() - started).toBeLessThan(3500);
    expect(text).toContain('event: stock');
    expect(text).toContain('event: end');
  });

  it(`caps a user at ${MAX_STREAMS_PER_USER} streams; closing one frees a slot`, async () => {
    // Leases of an earlier attempt (a retry, or a run minutes ago) would still hold slots for 30 s.
    await redis.del(keys.liveStreams(f.merchantB.id));
    const token = await createSession(redis, { id: f.merchantB.id, nickName: 'm', icon: '', role: 'merchant' });
    const b = (await callRoute(createRoute, { token, body: seckillBody(f.shopB, { stock: 5 }) })).json.data.id as string;
    const aborts = Array.from({ length: MAX_STREAMS_PER_USER }, () => new AbortController());
    const openB = (signal?: AbortSignal) =>
      streamRoute(new Request(`http://localhost:3000/api/admin/vouchers/${b}/stock/stream`, { headers: { authorization: `Bearer ${token}` }, signal }), { params: Promise.resolve({ id: b }) });
    const streams = await Promise.all(aborts.map((a) => openB(a.signal)));
    try {
    expect(streams.map((s) => s.status)).toEqual(Array(MAX_STREAMS_PER_USER).fill(200));
    const extra = await openB();
    expect(extra.status).toBe(429);
    // A browser leaving: the request aborts and its response body is cancelled (which is what
    // releases the slot; the copy of the signal a web Request keeps may follow the abort late).
    aborts[0]!.abort();
    await streams[0]!.body?.cancel().catch(() => {});
    // The slot is freed when the stream notices its abort (its next tick): on a loaded machine
    // that can take a moment, so look again for up to 3 s instead of once after 100 ms.
    let again = await openB();
    for (let i = 0; again.status === 429 && i < 30; i++) {
      await new Promise((r) => setTimeout(r, 100));
      again = await openB();
    }
    expect(again.status).toBe(200);
    await again.body?.cancel();
    } finally {
      for (const a of aborts) a.abort();
      for (const s of streams) await s.body?.cancel().catch(() => {});
    }
  });
});
