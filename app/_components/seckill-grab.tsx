'use client';

/**
 * PLACEHOLDER owned by the seckill engineer: the real component (countdown, grab button, result,
 * order polling) lives on the seckill branch and replaces this file on merge. Same props; it only
 * shows the sale window and the remaining stock so the shop page can render and be tested.
 */
export interface SeckillGrabProps {
  voucherId: string;
  beginTime: string;
  endTime: string;
  remaining: number | null;
}

const fmt = new Intl.DateTimeFormat('zh-CN', { timeZone: 'Asia/Shanghai', month: 'numeric', day: 'numeric', hour: '2-digit', minute: '2-digit' });

export function SeckillGrab({ voucherId, beginTime, endTime, remaining }: SeckillGrabProps) {
  return (
    <div className="rounded-lg border border-brand/30 bg-brand/5 p-3 text-sm" data-testid="seckill-grab" data-voucher-id={voucherId}>
      <p className="text-gray-500">
        {fmt.format(new Date(beginTime))} – {fmt.format(new Date(endTime))}
      </p>
      <p className="text-xs text-gray-500" data-testid="seckill-remaining">
        {remaining === null ? '库存加载中' : `剩余 ${remaining} 张`}
      </p>
    </div>
  );
}
