/**
 * Idempotent 点评 demo data: a handful of consumers who follow each other, notes about the demo
 * shops with generated pictures (drawn here as SVG and stored through the upload path, nothing
 * downloaded), some likes and comments, and the followers' inboxes filled. Natural keys: phone,
 * (author, title). A second run adds nothing; a note whose pictures vanished gets new ones.
 */
import sharp from 'sharp';
import type { DB } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { imageExists, storeImage } from '@/lib/upload/image';
import { fanOut } from '@/lib/feed/fanout';
import { demoShops } from '@/lib/seed/demo-data';
import { keys } from '@/lib/redis/keys';
import { beijingDaysAgo } from '@/lib/sign/beijing-day';

const people = [
  { phone: '13900000001', nick: '爱吃的小鱼' },
  { phone: '13900000002', nick: '探店阿杰' },
  { phone: '13900000003', nick: '甜品控Lily' },
  { phone: '13900000004', nick: '周末去哪儿' },
  { phone: '13900000005', nick: '火锅不停' },
];
/** [follower, followed] by index in `people`. */
const follows: [number, number][] = [[0, 1], [0, 2], [1, 0], [1, 2], [2, 0], [3, 0], [3, 1], [3, 2], [4, 1], [4, 2], [2, 4]];
const notes = [
  { by: 0, shop: 0, title: '人均八十吃到扶墙出', content: '招牌菜分量很足，服务也热情。\n推荐：红烧肉、酸菜鱼、椰子鸡。', pics: 3 },
  { by: 1, shop: 1, title: '工作日午市的宝藏小店', content: '十二点前到不用排队，套餐性价比很高。', pics: 2 },
  { by: 2, shop: 0, title: '第二次来了，依旧稳定', content: '这次点了新品，味道偏甜，适合带小朋友。', pics: 2 },
  { by: 1, shop: 2, title: '朋友聚餐的好地方', content: '包间安静，菜量很足，秒杀券很划算！', pics: 1 },
  { by: 4, shop: 3, title: '下雨天就想来一锅', content: '锅底香而不燥，毛肚七上八下刚刚好。', pics: 4 },
  { by: 3, shop: 4, title: '周末带娃好去处', content: '环境宽敞，有儿童座椅，停车方便。', pics: 2 },
];
const palettes = [['#ff6633', '#ffd6c2'], ['#059669', '#d1fae5'], ['#2563eb', '#dbeafe'], ['#d97706', '#fef3c7'], ['#db2777', '#fce7f3'], ['#7c3aed', '#ede9fe']];

/** A plate with food on a table, colours by `seed`: a picture, not a photo, and ours to generate. */
function pictureSvg(seed: number): string {
  const [main, light] = palettes[seed % palettes.length]!;
  const dots = Array.from({ length: 6 }, (_, i) => {
    const a = ((seed * 37 + i * 60) % 360) * (Math.PI / 180);
    return `<circle cx="${300 + Math.cos(a) * 110}" cy="${300 + Math.sin(a) * 110}" r="${38 + ((seed + i) % 4) * 8}" fill="${i % 2 ? main : '#fbbf24'}" opacity="0.9"/>`;
  }).join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="600">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${light}"/><stop offset="1" stop-color="#ffffff"/></linearGradient></defs>
    <rect width="600" height="600" fill="url(#g)"/>
    <circle cx="300" cy="300" r="230" fill="#ffffff" stroke="${main}" stroke-width="10"/>
    <circle cx="300" cy="300" r="70" fill="${main}" opacity="0.35"/>${dots}
  </svg>`;
}

async function pictures(seed: number, n: number): Promise<string> {
  const names: string[] = [];
  for (let i = 0; i < n; i++) names.push((await storeImage(await sharp(Buffer.from(pictureSvg(seed * 10 + i))).png().toBuffer())).name);
  return names.join(',');
}

export async function seedSocial(db: DB, redis: RedisClient): Promise<{ users: number; notes: number }> {
  await db.insertInto('tb_user').ignore().values(people.map((p) => ({ phone: p.phone, nick_name: p.nick, password: null }))).execute();
  const rows = await db.selectFrom('tb_user').select(['id', 'phone']).where('phone', 'in', people.map((p) => p.phone)).execute();
  const ids = people.map((p) => rows.find((r) => r.phone === p.phone)!.id);
  await db.insertInto('tb_follow').ignore().values(follows.map(([a, b]) => ({ user_id: ids[a]!, follow_user_id: ids[b]! }))).execute();

  // The demo shops (lib/seed/demo-data), in seed order: never shops that tests or merchants added.
  const shops = await db.selectFrom('tb_shop').select('id').where('name', 'in', demoShops().map((d) => d.name)).orderBy('id').limit(10).execute();
  if (shops.length === 0) return { users: ids.length, notes: 0 };
  for (const [i, n] of notes.entries()) {
    const author = ids[n.by]!;
    const shopId = shops[n.shop % shops.length]!.id;
    const existing = await db.selectFrom('tb_blog').select(['id', 'images']).where('user_id', '=', author).where('title', '=', n.title).executeTakeFirst();
    if (existing) {
      const present = await Promise.all(existing.images.split(',').map(imageExists));
      if (present.includes(false)) await db.updateTable('tb_blog').set({ images: await pictures(i, n.pics) }).where('id', '=', existing.id).execute();
      continue;
    }
    const r = await db
      .insertInto('tb_blog')
      .values({ shop_id: shopId, user_id: author, title: n.title, content: n.content, images: await pictures(i, n.pics), create_time: new Date(Date.now() - (notes.length - i) * 3600_000) })
      .executeTakeFirstOrThrow();
    const blogId = String(r.insertId);
    // Likes from everyone but the author, fewer for later notes, so "hot" has an order.
    const likers = ids.filter((u) => u !== author).slice(0, Math.max(1, 4 - (i % 4)));
    await db.insertInto('tb_blog_like').values(likers.map((u, k) => ({ blog_id: blogId, user_id: u, create_time: new Date(Date.now() - (10 - k) * 60_000) }))).execute();
    await db.updateTable('tb_blog').set({ liked: likers.length, comments: 1 }).where('id', '=', blogId).execute();
    await db.insertInto('tb_blog_comments').values({ blog_id: blogId, user_id: likers[0]!, content: '看饿了，收藏！' }).execute();
  }
  // Fill the inboxes the fan-out would have filled (idempotent: same member, same score).
  const seeded = await db
    .selectFrom('tb_blog')
    .select(['id', 'user_id', 'create_time'])
    .where('user_id', 'in', ids)
    .execute();
  for (const b of seeded) await fanOut(db, redis, { blogId: b.id, authorId: b.user_id, at: b.create_time.getTime() }, { blogExists: async () => true });
  await db.updateTable('tb_blog').set({ fanout_at: new Date() }).where('user_id', 'in', ids).where('fanout_at', 'is', null).execute();
  await seedTraffic(redis, shops.slice(0, 6).map((s) => s.id));
  return { users: ids.length, notes: seeded.length };
}

/** 30 days of shop visits for the console chart (visitor ids are fixed per day, so a rerun adds nothing). */
async function seedTraffic(redis: RedisClient, shopIds: string[]): Promise<void> {
  const ttl = 40 * 24 * 3600;
  for (const [k, shopId] of shopIds.entries()) {
    for (let ago = 1; ago <= 30; ago++) {
      const day = beijingDaysAgo(Date.now(), ago).yyyyMMdd;
      const uv = 40 + ((ago * 17 + k * 29) % 60) + (ago % 7 === 0 ? 50 : 0);
      await redis.pfadd(keys.shopUv(shopId, day), ...Array.from({ length: uv }, (_, i) => `v:seed-${day}-${i}`));
      await redis.expire(keys.shopUv(shopId, day), ttl);
      await redis.set(keys.shopPv(shopId, day), String(Math.round(uv * (1.6 + (ago % 3) * 0.4))), 'EX', ttl, 'NX');
    }
  }
}
