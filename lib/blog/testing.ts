/** Fixtures for the 点评 tests: users, a shop, stored images and notes, straight into the test database. */
import sharp from 'sharp';
import { db, type DB } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { ShopFixtures } from '@/lib/shop/testing';
import { storeImage } from '@/lib/upload/image';
import { acceptUpload } from '@/lib/upload/lifecycle';
import { randomPhone } from '@/lib/test/helpers';

export async function makeUsers(db: DB, n: number, prefix = 'u'): Promise<string[]> {
  const phones = Array.from({ length: n }, () => randomPhone());
  for (let i = 0; i < phones.length; i += 1000) {
    await db.insertInto('tb_user').ignore().values(phones.slice(i, i + 1000).map((phone, j) => ({ phone, nick_name: `${prefix}${i + j}`, password: null }))).execute();
  }
  const rows = await db.selectFrom('tb_user').select('id').where('phone', 'in', phones).execute();
  return rows.map((r) => r.id);
}

const fixtures = new ShopFixtures(db, redis);

/**
 * A shop of a type of its own (never one of the demo types, so home-page lists stay as the browser
 * tests expect); `cleanupSocialFixtures` removes them with the notes written about them.
 */
export async function makeShop(): Promise<string> {
  return fixtures.shop(fixtures.typeIds[0] ?? (await fixtures.type('笔记测试分类')));
}

export async function cleanupSocialFixtures(): Promise<void> {
  if (fixtures.shopIds.length > 0) {
    const notes = db.selectFrom('tb_blog').select('id').where('shop_id', 'in', fixtures.shopIds);
    await db.deleteFrom('tb_blog_like').where('blog_id', 'in', notes).execute();
    await db.deleteFrom('tb_blog_comments').where('blog_id', 'in', notes).execute();
    await db.deleteFrom('tb_blog').where('shop_id', 'in', fixtures.shopIds).execute();
  }
  await fixtures.cleanup();
}

/** A generated test picture (a colour gradient), encoded as `format`. */
export async function makePicture(format: 'jpeg' | 'png' = 'jpeg', width = 64, height = 48): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    raw[i * 3] = (i * 7) % 256;
    raw[i * 3 + 1] = (i * 3) % 256;
    raw[i * 3 + 2] = 180;
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).toFormat(format).toBuffer();
}

export async function storedImageName(): Promise<string> {
  return (await storeImage(await makePicture())).name;
}

/** An image uploaded by this user and not yet in a note (what publishing a note claims). */
export async function uploadedImageName(userId: string): Promise<string> {
  return (await acceptUpload(db, userId, await makePicture())).name;
}

export async function insertNote(db: DB, authorId: string, shopId: string, image: string, title = '测试笔记'): Promise<string> {
  const r = await db.insertInto('tb_blog').values({ shop_id: shopId, user_id: authorId, title, content: '好吃', images: image }).executeTakeFirstOrThrow();
  return String(r.insertId);
}
