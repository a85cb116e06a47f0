/**
 * Redis Cluster slot discipline. A cluster refuses (CROSSSLOT) any multi-key command, MULTI or
 * script whose keys hash to different slots, but only once it runs on a cluster; a single Redis
 * accepts them silently. So every client this project creates outside production carries a guard
 * that rejects such a call on any Redis, and every test run on one node catches what a cluster
 * would refuse in production.
 */
import type { Pipeline } from 'ioredis';
import type { RedisClient } from '@/lib/redis/types';

/** CRC16/XMODEM, the checksum Redis Cluster hashes keys with (cluster spec, appendix A). */
function crc16(buf: Buffer): number {
  let crc = 0;
  for (const byte of buf) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The cluster slot of a key: only the first non-empty `{hash tag}` counts when there is one. */
export function slotOf(key: string | Buffer): number {
  const buf = typeof key === 'string' ? Buffer.from(key) : key;
  const open = buf.indexOf(0x7b); // {
  if (open >= 0) {
    const close = buf.indexOf(0x7d, open + 1); // }
    if (close > open + 1) return crc16(buf.subarray(open + 1, close)) % 16384;
  }
  return crc16(buf) % 16384;
}

export class CrossSlotError extends Error {
  constructor(what: string, keys: (string | Buffer)[]) {
    const shown = keys.slice(0, 5).map(String).join(', ');
    super(`${what} touches keys of more than one cluster slot: ${shown}${keys.length > 5 ? `, … (${keys.length} keys)` : ''}`);
    this.name = 'CrossSlotError';
  }
}

/** Throws unless every key hashes to one slot (no keys is fine). */
export function assertOneSlot(what: string, keys: (string | Buffer)[]): void {
  if (keys.length < 2) return;
  const first = slotOf(keys[0]!);
  if (keys.some((k) => slotOf(k) !== first)) throw new CrossSlotError(what, keys);
}

interface QueuedCommand {
  name: string;
  getKeys(): (string | Buffer)[];
}
interface PipelineInternals {
  _queue: QueuedCommand[];
  exec: Pipeline['exec'];
}

/**
 * Makes `client` refuse, before anything is sent, a command, script, MULTI or pipeline whose keys
 * span slots. A pipeline is held to the same rule as a MULTI: ioredis sends a cluster pipeline to
 * one node only, and only one slot is sure to stay on one node through a resharding.
 */
export function guardSlots<T extends RedisClient>(client: T): T {
  const send = client.sendCommand.bind(client) as (...a: unknown[]) => unknown;
  (client as { sendCommand: unknown }).sendCommand = (command: QueuedCommand, ...rest: unknown[]) => {
    const keys = command.getKeys();
    if (keys.length > 1 && new Set(keys.map(slotOf)).size > 1) {
      const err = new CrossSlotError(`${command.name}`, keys);
      (command as unknown as { reject(e: Error): void }).reject(err);
      return (command as unknown as { promise: Promise<unknown> }).promise;
    }
    return send(command, ...rest);
  };
  for (const kind of ['multi', 'pipeline'] as const) {
    const make = (client[kind] as (...a: unknown[]) => Pipeline).bind(client);
    (client as unknown as Record<string, unknown>)[kind] = (...args: unknown[]) => {
      const pipe = make(...args) as unknown as PipelineInternals;
      const exec = pipe.exec.bind(pipe);
      pipe.exec = ((...execArgs: unknown[]) => {
        const keys = pipe._queue.filter((c) => c.name !== 'multi' && c.name !== 'exec').flatMap((c) => c.getKeys());
        try {
          assertOneSlot(kind === 'multi' ? 'MULTI' : 'pipeline', keys);
        } catch (err) {
          return Promise.reject(err);
        }
        return (exec as (...a: unknown[]) => ReturnType<Pipeline['exec']>)(...execArgs);
      }) as Pipeline['exec'];
      return pipe;
    };
  }
  return client;
}
