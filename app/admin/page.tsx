import { redirect } from 'next/navigation';
import { consoleUser } from '@/app/admin/_lib/gate';
import { Forbidden } from '@/app/admin/_components/forbidden';

export default async function AdminHome() {
  if (!(await consoleUser('/admin'))) return <Forbidden />;
  redirect('/admin/vouchers');
}
