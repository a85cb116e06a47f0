import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { idSchema } from '@/lib/http/parse';
import { AppError } from '@/lib/errors';
import { commonFollows, followList, userProfile } from '@/lib/follow/follow.service';
import { BLOG_PAGE_SIZE, userBlogs } from '@/lib/blog/blog.service';
import { getPageUserIfAvailable } from '@/lib/web/page-auth';
import { BlogGrid, Pager } from '../../blogs/_components/blog-card';
import { FollowButton } from '../../blogs/_components/follow-button';

type Props = { params: Promise<{ id: string }>; searchParams: Promise<{ page?: string }> };
export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: '用户主页' };

type Person = { id: string; nickName: string };

const SHOWN = 20;

/** Up to SHOWN names; when there are more, the heading says how many in all. */
function People({ title, people, total, testId }: { title: string; people: Person[]; total?: number; testId: string }) {
  const all = total ?? people.length;
  return (
    <section className="px-4 py-2">
      <h2 className="text-sm font-semibold text-gray-700">
        {title}
        {all > Math.min(SHOWN, people.length) && <span className="ml-1 text-xs font-normal text-gray-600" data-testid={`${testId}-total`}>共 {all} 人，显示前 {Math.min(SHOWN, people.length)} 人</span>}
      </h2>
      {people.length === 0 ? (
        <p className="text-xs text-gray-600">暂无</p>
      ) : (
        <ul className="mt-1 flex flex-wrap gap-2" data-testid={testId}>
          {people.slice(0, SHOWN).map((p) => (
            <li key={p.id}>
              <Link href={`/users/${p.id}`} className="rounded-full bg-gray-100 px-3 py-1 text-xs">{p.nickName}</Link>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export default async function UserPage({ params, searchParams }: Props) {
  const raw = (await params).id;
  const page = Math.min(1000, Math.max(1, Number((await searchParams).page) || 1));
  const viewer = await getPageUserIfAvailable();
  if (!idSchema.safeParse(raw).success) notFound();
  let profile;
  try {
    profile = await userProfile(db, redis, raw, viewer?.id ?? null);
  } catch (err) {
    if (err instanceof AppError && err.code === 'NOT_FOUND') notFound();
    throw err;
  }
  const [blogs, following, followers, common] = await Promise.all([
    userBlogs(db, redis, profile.id, page, viewer?.id ?? null),
    followList(db, profile.id, 'following'),
    followList(db, profile.id, 'followers'),
    viewer && viewer.id !== profile.id ? commonFollows(db, redis, viewer.id, profile.id) : Promise.resolve(null),
  ]);
  return (
    <div data-testid="user-page" data-user-id={profile.id}>
      <section className="flex items-center gap-4 bg-gradient-to-b from-brand/10 to-white p-4">
        <div className="flex h-16 w-16 flex-none items-center justify-center rounded-full bg-brand/15 text-2xl text-brand">{profile.nickName.slice(0, 1)}</div>
        <div className="min-w-0 flex-1">
          <h1 className="truncate text-lg font-semibold" data-testid="user-nickname">{profile.nickName}</h1>
          <p className="text-xs text-gray-600">{profile.introduce || '这个人很懒，什么都没写'}</p>
          <p className="mt-1 flex gap-4 text-sm">
            <span><b data-testid="user-following">{profile.following}</b> 关注</span>
            <span><b data-testid="user-followers">{profile.followers}</b> 粉丝</span>
          </p>
        </div>
        {profile.followedByMe !== null && <FollowButton userId={profile.id} initial={profile.followedByMe} />}
      </section>
      {common && <People title="共同关注" people={common.items} total={common.total} testId="common-follows" />}
      <People title="关注" people={following} total={profile.following} testId="following-list" />
      <People title="粉丝" people={followers} total={profile.followers} testId="followers-list" />
      <div className="h-2 bg-gray-50" />
      <h2 className="px-4 pt-3 text-base font-semibold">笔记</h2>
      <BlogGrid blogs={blogs} empty="还没有写过笔记" />
      <Pager base={`/users/${profile.id}`} page={page} hasMore={blogs.length === BLOG_PAGE_SIZE} />
    </div>
  );
}
