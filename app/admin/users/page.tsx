import type { Metadata } from 'next';
import { forbidden } from 'next/navigation';
import { db } from '@/lib/db/client';
import { phoneSchema } from '@/lib/auth/login';
import { findUserForRoleChange } from '@/lib/admin/user-role';
import { consoleUser, pathWithQuery } from '@/app/admin/_lib/gate';
import { RoleForm } from '@/app/admin/_components/role-form';

export const metadata: Metadata = { title: '用户角色' };

/** Admin only: find a user by phone and change their role; their logins end at once. */
export default async function UsersPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const user = await consoleUser(pathWithQuery('/admin/users', sp));
  if (user.role !== 'admin') forbidden();
  const phone = phoneSchema.safeParse(sp.phone);
  const found = phone.success ? await findUserForRoleChange(db, user, phone.data) : null;
  return (
    <section className="space-y-4">
      <h1 className="text-xl font-semibold">用户角色</h1>
      <form className="flex gap-2 rounded-lg bg-white p-4 shadow-sm" method="get">
        <input name="phone" defaultValue={typeof sp.phone === 'string' ? sp.phone : ''} placeholder="手机号" className="flex-1 rounded border px-3 py-2" data-testid="users-phone" />
        <button type="submit" className="rounded bg-gray-900 px-4 py-2 text-white" data-testid="users-search">
          查找
        </button>
      </form>
      {typeof sp.phone === 'string' && !found && <p className="text-gray-600" data-testid="users-none">没有找到该手机号的用户</p>}
      {found && <RoleForm user={found} self={found.id === user.id} />}
    </section>
  );
}
