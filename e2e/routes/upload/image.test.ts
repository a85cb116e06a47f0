/**
 * Hostile uploads through the real route: wrong types, oversize bodies, a decompression bomb named
 * .jpg, client-chosen names with path tricks; and a good photo comes back re-encoded, without its
 * EXIF block, served with long cache headers.
 */
import { readdir } from 'node:fs/promises';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb } from '@/lib/db/client';
import { closeRedis } from '@/lib/redis/client';
import { callRoute, loginNewUser } from '@/e2e/support/helpers';
import { uploadDir } from '@/lib/upload/image';
import { makePicture } from '@/e2e/support/fixtures/blog';
import { fakeImages, pngBomb } from '@/e2e/support/fixtures/upload';
import { POST as upload } from '@/app/api/uploads/route';
import { GET as serve } from '@/app/api/uploads/[name]/route';

let token = '';
beforeAll(async () => {
  token = (await loginNewUser()).token;
});
afterAll(async () => {
  await closeDb();
  await closeRedis();
});

async function countStored(): Promise<number> {
  const dirs = await readdir(uploadDir()).catch(() => [] as string[]);
  let n = 0;
  for (const d of dirs) n += (await readdir(`${uploadDir()}/${d}`).catch(() => [] as string[])).filter((f) => f.endsWith('.webp')).length;
  return n;
}

async function send(body: Buffer | string, type = 'image/jpeg', headers: Record<string, string> = {}) {
  const h = new Headers({ authorization: `Bearer ${token}`, 'content-type': type, ...headers });
  const res = await upload(new Request('http://localhost:3000/api/uploads', { method: 'POST', headers: h, body: typeof body === 'string' ? body : new Uint8Array(body) }), { params: Promise.resolve({}) });
  return { status: res.status, json: await res.json() };
}

describe('image upload', () => {
  it('refuses what is not an image, whatever it claims to be, and stores nothing', async () => {
    const before = await countStored();
    const cases: [Buffer | string, string, number][] = [
      ...fakeImages.map(([, body, type]): [Buffer | string, string, number] => [body, type, 415]),
      ['{"a":1}', 'application/json', 415],
      ['a,b', 'text/csv', 415],
      ['', 'image/png', 400],
    ];
    for (const [body, type, status] of cases) {
      const r = await send(body, type);
      expect(r.status, `${type} ${String(body).slice(0, 20)}`).toBe(status);
      expect(typeof r.json.error.code).toBe('string');
    }
    const svg = await send(await sharp(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>')).toBuffer(), 'image/png');
    expect(svg.status).toBe(200); // a real PNG made from an SVG is fine: only the bytes count
    expect(await countStored()).toBe(before + 1);
  });

  it('refuses a body over 5 MB, by declared length and by actual length', async () => {
    const big = Buffer.alloc(5 * 1024 * 1024 + 10, 1);
    expect((await send(big, 'image/jpeg')).status).toBe(413);
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 6; i++) c.enqueue(new Uint8Array(1024 * 1024));
        c.close();
      },
    });
    const res = await upload(
      new Request('http://localhost:3000/api/uploads', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'image/png' }, body: stream, duplex: 'half' } as RequestInit),
      { params: Promise.resolve({}) },
    );
    expect(res.status).toBe(413);
  });

  it('refuses a decompression bomb named .jpg (8 KB declaring 64 Mpx) without decoding it', async () => {
    const bomb = pngBomb();
    expect(bomb.length).toBeLessThan(64 * 1024);
    const before = await countStored();
    const started = Date.now();
    const r = await send(bomb, 'image/jpeg', { 'x-file-name': 'holiday.jpg' });
    expect(r.status).toBe(413);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await countStored()).toBe(before);
  });

  it('re-encodes a photo to WebP, drops its EXIF (GPS) block, and names it itself', async () => {
    const withExif = await sharp(await makePicture('jpeg', 800, 600))
      .withExif({ IFD0: { Make: 'SecretPhone', ImageDescription: 'home address' } })
      .jpeg()
      .toBuffer();
    expect((await sharp(withExif).metadata()).exif).toBeDefined();
    const r = await send(withExif, 'application/octet-stream', { 'x-file-name': '../../etc/passwd.jpg' });
    expect(r.status).toBe(200);
    expect(r.json.data.name).toMatch(/^[a-f0-9]{32}\.webp$/);
    const got = await serve(new Request(`http://localhost:3000${r.json.data.url}`), { params: Promise.resolve({ name: r.json.data.name }) });
    expect(got.status).toBe(200);
    // Deleted with its note: an hour in a cache at most, never "immutable" for a year.
    expect(got.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(got.headers.get('content-type')).toBe('image/webp');
    const bytes = Buffer.from(await got.arrayBuffer());
    const meta = await sharp(bytes).metadata();
    expect(meta.format).toBe('webp');
    expect(meta.exif).toBeUndefined();
    expect(bytes.includes(Buffer.from('SecretPhone'))).toBe(false);
  });

  it('serves only names it could have made: path tricks are 404 and read nothing', async () => {
    for (const name of ['../../../etc/passwd', '..%2F..%2Fetc%2Fpasswd', 'a'.repeat(32) + '.webp/../x', '/etc/passwd', 'A'.repeat(32) + '.webp', 'x.webp', '']) {
      const r = await callRoute(serve, { params: { name } });
      expect(r.status, name).toBe(404);
    }
  });

  it('needs a login', async () => {
    const res = await upload(new Request('http://localhost:3000/api/uploads', { method: 'POST', headers: { 'content-type': 'image/png' }, body: new Uint8Array(await makePicture('png')) }), { params: Promise.resolve({}) });
    expect(res.status).toBe(401);
  });
});
