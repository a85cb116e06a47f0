/**
 * The upload quota (UPLOAD_MAX_PER_USER) is exact under concurrency: the count and the insert run
 * under the uploader's row lock, so parallel uploads by one user at cap − 1 store exactly one more
 * image, and a refused upload leaves no file behind. Another user's uploads do not wait for that
 * lock. Before, the route counted and then inserted, so every upload in flight at once passed the
 * same count (16 parallel uploads at cap − 1 all stored). Found and proved by a review helper.
 */
import { readdirSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const CAP = 5;
const dir = await vi.hoisted(async () => {
  // A small cap for the race, and a private upload directory whose files this file counts.
  const [{ mkdtempSync }, os, path] = await Promise.all([import('node:fs'), import('node:os'), import('node:path')]);
  process.env.UPLOAD_MAX_PER_USER = '5';
  process.env.UPLOAD_DIR = mkdtempSync(path.join(os.tmpdir(), 'hmdp-quota-race-'));
  return process.env.UPLOAD_DIR;
});

import { db } from '@/lib/db/client';
import { env } from '@/lib/env';
import { loginNewUser } from '@/e2e/support/helpers';
import { endSocialSuite, makePicture } from '@/e2e/support/fixtures/blog';
import { POST as uploadRoute } from '@/app/api/uploads/route';

type Login = Awaited<ReturnType<typeof loginNewUser>>;
let picture: Uint8Array<ArrayBuffer>;

beforeAll(async () => {
  expect(env.UPLOAD_MAX_PER_USER).toBe(CAP);
  picture = new Uint8Array(await makePicture('png'));
});
afterAll(async () => {
  await endSocialSuite();
  rmSync(dir, { recursive: true, force: true });
});

/** One upload through the real route: its status and error code. */
async function upload(token: string): Promise<{ status: number; code?: string }> {
  const req = new Request('http://localhost:3000/api/uploads', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'image/png' }, body: picture });
  const res = await uploadRoute(req, { params: Promise.resolve({}) });
  const body = (await res.json()) as { error?: { code: string } };
  return { status: res.status, code: body.error?.code };
}

/** Gives the user `n` stored-image rows (they stand for images, as in lifecycle.test.ts). */
async function holdImages(u: Login, n: number): Promise<void> {
  if (n === 0) return;
  await db
    .insertInto('tb_upload')
    .values(Array.from({ length: n }, (_, i) => ({ name: `race-${u.userId}-${i}.webp`, user_id: u.userId })))
    .execute();
}

async function countRows(u: Login): Promise<number> {
  const r = await db.selectFrom('tb_upload').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', u.userId).executeTakeFirstOrThrow();
  return Number(r.n);
}

const filesOnDisk = () => readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith('.webp')).length;

describe('upload quota under concurrency', () => {
  it('16 parallel uploads at cap − 1: exactly one is stored, the rest 409 UPLOAD_QUOTA, no file left behind', async () => {
    const u = await loginNewUser();
    await holdImages(u, CAP - 1);
    const filesBefore = filesOnDisk();
    const rs = await Promise.all(Array.from({ length: 16 }, () => upload(u.token)));
    expect(rs.filter((r) => r.status === 200)).toHaveLength(1);
    expect(rs.filter((r) => r.status !== 200)).toEqual(Array.from({ length: 15 }, () => ({ status: 409, code: 'UPLOAD_QUOTA' })));
    expect(await countRows(u)).toBe(CAP);
    expect(filesOnDisk() - filesBefore).toBe(1);
  });

  it('two users racing at cap − 1 at once: each ends exactly at the cap', async () => {
    const [a, b] = await Promise.all([loginNewUser(), loginNewUser()]);
    await holdImages(a, CAP - 1);
    await holdImages(b, CAP - 1);
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => upload(i % 2 ? a.token : b.token)));
    expect(rs.filter((r) => r.status === 200)).toHaveLength(2);
    expect(await countRows(a)).toBe(CAP);
    expect(await countRows(b)).toBe(CAP);
  });

  it("one user's lock does not hold up another user's upload", async () => {
    const [a, b] = await Promise.all([loginNewUser(), loginNewUser()]);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    // Another transaction holds a's row, as a's concurrent upload would.
    const holder = db.transaction().execute(async (trx) => {
      await trx.selectFrom('tb_user').select('id').where('id', '=', a.userId).forUpdate().execute();
      locked();
      await released;
    });
    await isLocked;
    let aDone = false;
    const aUpload = upload(a.token).then((r) => {
      aDone = true;
      return r;
    });
    expect(await upload(b.token)).toEqual({ status: 200, code: undefined });
    expect(aDone).toBe(false); // a waits for its own row only
    release();
    await holder;
    expect((await aUpload).status).toBe(200);
    expect(await countRows(a)).toBe(1);
    expect(await countRows(b)).toBe(1);
  });
});
