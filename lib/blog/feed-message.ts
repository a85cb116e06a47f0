/** The fan-out message: which note, by whom, and its publish time (the inbox score). */
import { z } from 'zod';

const schema = z.object({ v: z.literal(1), blogId: z.string().regex(/^[1-9]\d{0,18}$/), authorId: z.string().regex(/^[1-9]\d{0,18}$/), at: z.number().int().positive() });
export type FeedMessage = Omit<z.infer<typeof schema>, 'v'>;

export const encodeFeedMessage = (m: FeedMessage) => Buffer.from(JSON.stringify({ v: 1, ...m }));

export function decodeFeedMessage(body: Buffer): FeedMessage | null {
  try {
    const r = schema.safeParse(JSON.parse(body.toString('utf8')));
    return r.success ? { blogId: r.data.blogId, authorId: r.data.authorId, at: r.data.at } : null;
  } catch {
    return null;
  }
}
