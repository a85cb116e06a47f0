import type { Metadata } from 'next';
import Link from 'next/link';
import { requirePageUser } from '@/lib/web/page-auth';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { signStatus } from '@/lib/sign/sign.service';
import { SignCard } from './sign-card';

export const metadata: Metadata = { title: '我的' };

const ROLE_LABEL = { user: '普通用户', merchant: '商家', admin: '管理员' } as const;

export default async function MePage() {
  const user = await requirePageUser('/me');
  const sign = await signStatus(db, redis, user.id);
  return (
    <section className="p-6">
      <div className="flex items-center gap-4">
        <div className="flex h-16 w-16 items-center justify-center rounded-full bg-brand/10 text-2xl text-brand">
          {user.nickName.slice(0, 1).toUpperCase()}
        </div>
        <div>
          <h1 className="text-xl font-semibold" data-testid="profile-nickname">{user.nickName}</h1>
          <p className="text-sm text-gray-600" data-testid="profile-role">{ROLE_LABEL[user.role]}</p>
        </div>
      </div>
      <nav className="mt-4 flex gap-3 text-sm">
        <Link href={`/users/${user.id}`} className="rounded-full bg-gray-100 px-3 py-1" data-testid="my-page">我的主页</Link>
        <Link href="/feed" className="rounded-full bg-gray-100 px-3 py-1">关注动态</Link>
        <Link href="/blogs/new" className="rounded-full bg-brand px-3 py-1 text-white">写笔记</Link>
      </nav>
      <SignCard initial={sign} />
      <p className="mt-6 text-sm text-gray-600">登录状态 30 分钟无操作后失效，任何操作都会自动续期。</p>
    </section>
  );
}
