import type { VoucherState } from '@/lib/voucher/voucher.schema';

const STATE: Record<VoucherState, { label: string; cls: string }> = {
  live: { label: '进行中', cls: 'bg-green-100 text-green-800' },
  upcoming: { label: '未开始', cls: 'bg-blue-100 text-blue-800' },
  ended: { label: '已结束', cls: 'bg-gray-200 text-gray-700' },
  taken_down: { label: '已下架', cls: 'bg-red-100 text-red-700' },
};

export const STATE_LABEL: Record<VoucherState, string> = Object.fromEntries(Object.entries(STATE).map(([k, v]) => [k, v.label])) as Record<VoucherState, string>;

export function StateBadge({ state, testId }: { state: VoucherState; testId?: string }) {
  const s = STATE[state];
  return (
    <span className={`inline-block rounded px-2 py-0.5 text-xs font-medium ${s.cls}`} data-testid={testId} data-state={state}>
      {s.label}
    </span>
  );
}
