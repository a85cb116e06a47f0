import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { getPageUser } from '@/lib/web/page-auth';
import { sameOriginPath } from '@/lib/http/safe-redirect';
import { LoginForm } from '@/app/(shop)/login/login-form';

export const metadata: Metadata = { title: '登录' };

export default async function LoginPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const next = sameOriginPath((await searchParams).next); // no open redirect
  if (await getPageUser()) redirect(next);
  return <LoginForm next={next} />;
}
