import { redirect } from 'next/navigation';
import { consoleUser } from '@/app/admin/_lib/gate';

export default async function AdminHome() {
  await consoleUser('/admin');
  redirect('/admin/vouchers');
}
