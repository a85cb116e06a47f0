import { route } from '@/lib/http/route';
import { parseId, parseJson } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { consume } from '@/lib/rate-limit';
import { commentCreateSchema } from '@/lib/blog/blog.schema';
import { addComment } from '@/lib/blog/blog.service';

/** POST /api/blogs/{id}/comments {content} — comment on a note (the note page lists them). */
export const POST = route({ auth: 'user' }, async ({ req, params, user }) => {
  const id = parseId(params.id, '笔记 id');
  const { content } = await parseJson(req, commentCreateSchema);
  await consume('blogWriteUser', user.id);
  return addComment(db, user, id, content);
});
