/** The JSON shape of a note, shared by the API and the pages. */
import type { BlogRow } from '@/lib/blog/blog.repository';

export interface BlogView {
  id: string;
  title: string;
  content: string;
  images: string[];
  liked: number;
  comments: number;
  isLiked: boolean;
  createTime: string;
  author: { id: string; nickName: string; icon: string };
  shop: { id: string; name: string; image: string; area: string; avgPrice: number; score: number } | null;
}

export const imageUrl = (name: string) => `/api/uploads/${name}`;

export function toBlogView(r: BlogRow, isLiked = false): BlogView {
  return {
    id: r.id,
    title: r.title,
    content: r.content,
    images: r.images.split(',').filter(Boolean).map(imageUrl),
    liked: r.liked,
    comments: r.comments,
    isLiked,
    createTime: r.create_time.toISOString(),
    author: { id: r.user_id, nickName: r.nick_name, icon: r.icon },
    shop:
      r.shop_name == null
        ? null
        : {
            id: r.shop_id,
            name: r.shop_name,
            image: (r.shop_images ?? '').split(',')[0] ?? '',
            area: r.shop_area ?? '',
            avgPrice: Number(r.shop_avg_price ?? 0),
            score: Number(r.shop_score ?? 0),
          },
  };
}
