/**
 * What a Redis restart would forget. The sale lives in Redis first (stock, buyers, the outbox),
 * so its durability is the server's persistence setting: AOF with fsync always loses nothing
 * acknowledged, everysec up to about a second, RDB snapshots everything since the last one, and
 * no persistence at all (a default redis-server) everything. A cluster adds asynchronous
 * replication: a failover can forget the last grabs a master acknowledged, whatever its fsync.
 */
import { masterNodes } from '@/lib/redis/client';
import type { RedisClient } from '@/lib/redis/types';
import type { Redis } from 'ioredis';

export type FsyncPolicy = 'always' | 'everysec' | 'no';

export interface NodePersistence {
  aof: boolean;
  fsync: FsyncPolicy | null;
  /** RDB save points, e.g. "3600 1 300 100"; empty when snapshots are off. */
  rdbSave: string;
  /** Chinese, for the console and /api/health; null when a restart forgets no acknowledged grab. */
  warning: string | null;
}

export interface Persistence {
  nodes: NodePersistence[];
  /** The worst node's warning (every master holds part of the sale). */
  warning: string | null;
  replicated: boolean;
}

export function persistenceWarning(aof: boolean, fsync: FsyncPolicy | null, rdbSave: string): string | null {
  if (aof && fsync === 'always') return null;
  if (aof && fsync === 'everysec') return 'Redis 使用 AOF everysec：宕机重启最多丢失约 1 秒内已受理的抢购';
  if (aof) return 'Redis 的 AOF 由操作系统决定何时落盘（appendfsync no）：宕机重启可能丢失数秒内已受理的抢购';
  if (rdbSave.trim()) return `Redis 只有 RDB 快照（save ${rdbSave}）：重启会丢失上次快照之后的全部抢购`;
  return 'Redis 没有开启任何持久化：重启会丢失全部秒杀库存、买家和待落库订单';
}

async function readNode(node: Redis): Promise<NodePersistence> {
  const info = await node.info('persistence');
  const aof = /aof_enabled:1/.test(info);
  const [, fsyncRaw] = (await node.config('GET', 'appendfsync')) as string[];
  const [, rdbSave = ''] = (await node.config('GET', 'save')) as string[];
  const fsync = fsyncRaw === 'always' || fsyncRaw === 'everysec' || fsyncRaw === 'no' ? fsyncRaw : null;
  return { aof, fsync, rdbSave, warning: persistenceWarning(aof, fsync, rdbSave) };
}

const rank = (w: string | null) => (w === null ? 0 : w.includes('没有开启') ? 3 : w.includes('RDB') ? 2 : 1);

export async function readPersistence(client: RedisClient): Promise<Persistence> {
  const nodes = await Promise.all(masterNodes(client).map(readNode));
  const worst = nodes.reduce<string | null>((w, n) => (rank(n.warning) > rank(w) ? n.warning : w), null);
  const replicated = masterNodes(client).length > 1 || /connected_slaves:[1-9]/.test(await client.info('replication'));
  return { nodes, warning: replicated && worst === null ? '主从复制是异步的：故障转移可能丢失刚受理的抢购（见 SECKILL_REPLICA_WAIT_MS）' : worst, replicated };
}
