import { route } from '@/lib/http/route';
import { notFound } from '@/lib/errors';
import { readImage } from '@/lib/upload/image';

/**
 * GET /api/uploads/{name} — a stored image. Names are random and content never changes, but a
 * picture is deleted with its note: caches may keep it an hour, not a year, and must not treat it
 * as immutable.
 */
export const GET = route({ auth: 'none' }, async ({ params }) => {
  const bytes = await readImage(params.name ?? '');
  if (!bytes) throw notFound('图片');
  return new Response(new Uint8Array(bytes), {
    headers: {
      'content-type': 'image/webp',
      'cache-control': 'public, max-age=3600',
      'x-content-type-options': 'nosniff',
      'content-length': String(bytes.byteLength),
    },
  });
});
