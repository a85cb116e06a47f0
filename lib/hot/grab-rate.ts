/**
 * The grab rate by outcome for the console's live page: read from the web server's metrics port
 * (WEB_METRICS_PORT, lib/hot/metrics.ts) on this machine. The primary keeps the rate from its own
 * scrapes, so any web process (or `next dev` pointed at a running server's port) reads the same
 * numbers. Without a metrics port there is nothing to read, and the answer says so instead of
 * showing zeros.
 */
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import type { GrabRateSnapshot } from '@/lib/hot/metrics';

export type GrabRate = { enabled: false; reason: string } | ({ enabled: true } & GrabRateSnapshot) | { enabled: true; unavailable: string };

/** The metrics server listens on HOST; a wildcard HOST is reached on loopback. */
function metricsHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

export async function readGrabRate(port = env.WEB_METRICS_PORT, host = env.HOST): Promise<GrabRate> {
  if (!port) return { enabled: false, reason: '未设置 WEB_METRICS_PORT：Web 进程不导出指标，无法显示抢购速率' };
  try {
    const res = await fetch(`http://${metricsHost(host)}:${port}/grab-rate`, { signal: AbortSignal.timeout(1000), cache: 'no-store' });
    if (!res.ok) throw new Error(`metrics port answered ${res.status}`);
    return { enabled: true, ...((await res.json()) as GrabRateSnapshot) };
  } catch (err) {
    log.warn({ err: (err as Error).message, port }, 'grab rate: metrics port unreachable');
    return { enabled: true, unavailable: '指标端口暂时无法连接（Web 服务器是否以 WEB_METRICS_PORT 启动？）' };
  }
}
