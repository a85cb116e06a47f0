/**
 * Cached shop detail vs a bare constant-JSON route of the same size (npm run bench -- --scenario
 * shop --compare). Variants: `cached` = GET /api/shops/{id} (route wrapper → validation → one
 * Redis GET) through the product's web server (the hot server's Next fallback), `constant` = GET
 * /api/bench/constant (no wrapper, no Redis), `next-start` = the same cached GET on plain
 * `next start` (no hot server in front: the "before"). --compare prints cached / next-start.
 * Each variant gets its own fresh server, a warm-up storm, then the measured storm.
 * --part all|split (the web server's WEB_PART, docs/hot-server.md#the-split-server; default the
 * product's): with split the cached GET and the constant pass the web process's proxy to Next's own.
 */
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { seedDemo } from '@/lib/seed/seed';
import { warmShopCaches } from '@/lib/shop/shop.warm';
import { prepareBenchDb } from '../setup';
import type { Scenario } from '../types';

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

async function prepare(): Promise<string> {
  await prepareBenchDb();
  await seedDemo(db);
  const { hotShopIds } = await warmShopCaches(db, redis); // as npm run up does
  const id = hotShopIds[0] ?? (await db.selectFrom('tb_shop').select('id').orderBy('id').executeTakeFirstOrThrow()).id;
  return String(id);
}

export const scenario: Scenario = {
  description: 'cached GET /api/shops/{id} vs a bare constant-JSON route of the same size',
  variants: ['cached', 'constant', 'next-start'],
  async run(h, a, variant) {
    const part = a.extra.part;
    if (part !== undefined && !['all', 'split'].includes(part)) throw new Error('--part must be all or split (hot serves no shop detail)');
    const shopId = await prepare();
    const web = variant === 'next-start' ? await h.startNextStart(h.hooks('bench-routes')) : await h.startWeb({ ...h.hooks('bench-routes'), ...(part ? { WEB_PART: part } : {}) });
    const detail = await fetch(`${web.url}/api/shops/${shopId}`);
    const bytes = Buffer.byteLength(await detail.text());
    const path = variant === 'constant' ? `/api/bench/constant?bytes=${bytes}` : `/api/shops/${shopId}`;
    const check = await fetch(`${web.url}${path}`);
    const checkBytes = Buffer.byteLength(await check.text());

    const storm = (label: string, durationS: number) =>
      h.storm({ label, url: web.url, path, method: 'GET', connections: a.connections, durationS, rate: a.rate });
    await storm(`warm-up ${variant}`, Math.min(3, a.duration));
    const s = await storm(`storm ${variant}`, a.duration);
    await h.stopAll();

    const ok = s.statuses['200'] ?? 0;
    const cachedInRedis = variant !== 'constant' ? (await redis.exists(keys.shop(shopId))) === 1 : null;
    const line = {
      scenario: 'shop',
      variant,
      ...(part && variant !== 'next-start' ? { part } : {}),
      path,
      body_bytes: checkBytes,
      requests: s.requests,
      rps: round(s.rps),
      p50_ms: round(s.p50Ms),
      p99_ms: round(s.p99Ms),
      ok,
      errors: s.errors,
    };
    const failures = [
      ...(detail.status !== 200 || check.status !== 200 ? [`setup request answered ${detail.status}/${check.status}`] : []),
      ...(ok !== s.requests ? [`${s.requests - ok} non-200 answers`] : []),
      ...(Math.abs(checkBytes - bytes) > 0 ? [`body sizes differ: ${checkBytes} vs ${bytes}`] : []),
      ...(cachedInRedis === false ? ['the shop was not in the cache'] : []),
    ];
    return {
      line,
      rps: s.rps,
      p99Ms: s.p99Ms,
      failures,
      summary: [
        `${variant}${part && variant !== 'next-start' ? ` (WEB_PART=${part})` : ''}: GET ${path} · ${bytes} bytes · ${a.connections} connections · ${round(s.durationS)} s`,
        `  ${s.requests} requests · ${line.rps} req/s · latency p50 ${line.p50_ms} ms, p99 ${line.p99_ms} ms${s.errors ? ` · ${s.errors} errors` : ''}`,
      ],
    };
  },
};
