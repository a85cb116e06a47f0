import { route } from '@/lib/http/route';
import { parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { eventStream, eventStreamHeaders } from '@/lib/admin/event-stream';
import { AppError } from '@/lib/errors';
import { keys } from '@/lib/redis/keys';
import { MAX_STREAMS_PER_USER, takeStreamSlot } from '@/lib/admin/stream-slots';
import { getSaleSeries, readLiveStock, requireSeckillAccess } from '@/lib/admin/live-stock';

export const dynamic = 'force-dynamic';

/** Server-sent `stock` events (numbers, verdict, chart series) about every second until the client leaves or logs out; at most MAX_STREAMS_PER_USER at once. */
export const GET = route({ auth: 'merchant' }, async ({ req, params, user, caller }) => {
  const id = parseId(params.id);
  await requireSeckillAccess(db, user, id);
  const slot = await takeStreamSlot(redis, user.id);
  if (!slot) throw new AppError('RATE_LIMITED', `同时打开的实时页面过多（最多 ${MAX_STREAMS_PER_USER} 个），请关闭其他页面后重试`, { retryAfter: 5 });
  const session = keys.session(caller!.token);
  const tick = async () => {
    const stock = await readLiveStock(db, redis, id);
    return { stock, series: await getSaleSeries(db, redis, stock) };
  };
  // One Redis read per tick: a logout (or a revoked session) ends the stream within a second. A
  // stream whose slot lapsed while a tick stalled, and was taken meanwhile, ends too (the cap).
  const stillAllowed = async () => {
    if (!(await slot.renew())) return 'too-many-streams';
    return (await redis.exists(session)) === 1;
  };
  const onClose = () => void slot.release().catch(() => {});
  return new Response(eventStream(tick, req.signal, { event: 'stock', stillAllowed, onClose }), { headers: eventStreamHeaders });
});
