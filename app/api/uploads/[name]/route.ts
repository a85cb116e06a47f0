import { route } from '@/lib/http/route';
import { notFound } from '@/lib/errors';
import { readImage } from '@/lib/upload/image';

/** GET /api/uploads/{name} — a stored image. Names are random and content never changes: cached for a year. */
export const GET = route({ auth: 'none' }, async ({ params }) => {
  const bytes = await readImage(params.name ?? '');
  if (!bytes) throw notFound('图片');
  return new Response(new Uint8Array(bytes), {
    headers: {
      'content-type': 'image/webp',
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
      'content-length': String(bytes.byteLength),
    },
  });
});
