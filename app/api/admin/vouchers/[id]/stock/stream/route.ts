import { route } from '@/lib/http/route';
import { parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { eventStream, eventStreamHeaders } from '@/lib/admin/event-stream';
import { getSaleSeries, readLiveStock, requireSeckillAccess } from '@/lib/admin/live-stock';

export const dynamic = 'force-dynamic';

/** Server-sent `stock` events (numbers, verdict, chart series) about every second until the client leaves. */
export const GET = route({ auth: 'merchant' }, async ({ req, params, user }) => {
  const id = parseId(params.id);
  await requireSeckillAccess(db, user, id);
  const tick = async () => {
    const stock = await readLiveStock(db, redis, id);
    return { stock, series: await getSaleSeries(db, redis, stock) };
  };
  return new Response(eventStream(tick, req.signal, { event: 'stock' }), { headers: eventStreamHeaders });
});
