'use client';

/** One user's role with a confirmed change; the change logs the user out everywhere. */
import { api } from '@/lib/web/client-api';
import { useAction } from '@/app/admin/_components/use-action';
import { ConfirmButton } from '@/app/admin/_components/confirm-button';
import type { UserRoleView } from '@/lib/admin/user-role';

const ROLE = { user: '普通用户', merchant: '商家', admin: '管理员' } as const;

export function RoleForm({ user, self }: { user: UserRoleView; self: boolean }) {
  const { result, act } = useAction();
  return (
    <div className="space-y-3 rounded-lg bg-white p-4 shadow-sm" data-testid="users-found">
      <p>
        {user.nickName}（{user.phone}）当前角色：<strong data-testid="users-role">{ROLE[user.role]}</strong>
      </p>
      {self ? (
        <p className="text-sm text-gray-600">不能修改自己的角色</p>
      ) : (
        <div className="flex gap-2">
          {(Object.keys(ROLE) as (keyof typeof ROLE)[])
            .filter((r) => r !== user.role)
            .map((r) => (
              <ConfirmButton
                key={r}
                label={`改为${ROLE[r]}`}
                title={`改为${ROLE[r]}？`}
                message="修改后该用户在所有设备上的登录立即失效，需要重新登录。"
                testId={`users-set-${r}`}
                onConfirm={act(async () => {
                  const out = await api<{ revokedSessions: number }>(`/api/admin/users/${user.id}`, { method: 'PATCH', body: { role: r } });
                  return `已改为${ROLE[r]}，结束了 ${out.revokedSessions} 个登录`;
                })}
              />
            ))}
        </div>
      )}
      {result && <p className={result.ok ? 'text-green-700' : 'text-red-700'} data-testid="users-result">{result.text}</p>}
    </div>
  );
}
