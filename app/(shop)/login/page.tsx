import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { getPageUser } from '@/lib/web/page-auth';
import { LoginForm } from '@/app/(shop)/login/login-form';

export const metadata: Metadata = { title: '登录' };

/** Only same-site paths are followed after login (no open redirect). */
function safeNext(next: string | string[] | undefined): string {
  return typeof next === 'string' && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

export default async function LoginPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const next = safeNext((await searchParams).next);
  if (await getPageUser()) redirect(next);
  return <LoginForm next={next} />;
}
