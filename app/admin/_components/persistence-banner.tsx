import { redis } from '@/lib/redis/client';
import { readPersistence, type Persistence } from '@/lib/redis/persistence';

/** Read at most every 30 s per process: the setting changes rarely and every console page shows it. */
let cached: { at: number; value: Persistence | null } | undefined;

async function persistence(): Promise<Persistence | null> {
  if (cached && Date.now() - cached.at < 30_000) return cached.value;
  const value = await readPersistence(redis).catch(() => null);
  cached = { at: Date.now(), value };
  return value;
}

function describe(p: Persistence): string {
  const n = p.nodes[0];
  if (!n) return '';
  const aof = n.aof ? `AOF ${n.fsync ?? ''}` : 'AOF 关闭';
  const rdb = n.rdbSave.trim() ? `RDB ${n.rdbSave}` : 'RDB 关闭';
  return `${aof} · ${rdb}${p.nodes.length > 1 ? ` · 集群 ${p.nodes.length} 个主节点` : ''}`;
}

/** The console's warning when a Redis restart or failover would forget accepted grabs. */
export async function PersistenceBanner() {
  const p = await persistence();
  if (!p || !p.warning) return null;
  return (
    <div role="alert" data-testid="redis-persistence-warning" className="border-b border-amber-300 bg-amber-50 px-4 py-2 text-sm text-amber-900">
      <span className="font-medium">⚠ {p.warning}</span>
      <span className="ml-2 text-amber-700">（当前：{describe(p)}）</span>
    </div>
  );
}
