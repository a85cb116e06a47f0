/** Fixtures for the 点评 tests: users, a shop, stored images and notes, straight into the test database. */
import { randomInt } from 'node:crypto';
import sharp from 'sharp';
import type { DB } from '@/lib/db/client';
import { storeImage } from '@/lib/upload/image';
import { randomPhone } from '@/lib/test/helpers';

export async function makeUsers(db: DB, n: number, prefix = 'u'): Promise<string[]> {
  const phones = Array.from({ length: n }, () => randomPhone());
  for (let i = 0; i < phones.length; i += 1000) {
    await db.insertInto('tb_user').ignore().values(phones.slice(i, i + 1000).map((phone, j) => ({ phone, nick_name: `${prefix}${i + j}`, password: null }))).execute();
  }
  const rows = await db.selectFrom('tb_user').select('id').where('phone', 'in', phones).execute();
  return rows.map((r) => r.id);
}

export async function makeShop(db: DB): Promise<string> {
  const type = await db.selectFrom('tb_shop_type').select('id').executeTakeFirst();
  const typeId = type?.id ?? String((await db.insertInto('tb_shop_type').values({ name: '测试类型' }).executeTakeFirstOrThrow()).insertId);
  const r = await db
    .insertInto('tb_shop')
    .values({ name: `笔记测试店${randomInt(1e6)}`, type_id: typeId, address: '测试路 1 号', x: 120.15, y: 30.28, avg_price: 80 })
    .executeTakeFirstOrThrow();
  return String(r.insertId);
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

export async function insertNote(db: DB, authorId: string, shopId: string, image: string, title = '测试笔记'): Promise<string> {
  const r = await db.insertInto('tb_blog').values({ shop_id: shopId, user_id: authorId, title, content: '好吃', images: image }).executeTakeFirstOrThrow();
  return String(r.insertId);
}
