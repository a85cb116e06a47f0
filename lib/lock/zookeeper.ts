/**
 * The ZooKeeper lock (the recipe the original 黑马点评 teaches): every contender creates an ephemeral sequential znode
 * under /hmdp/locks/<name>; the lowest sequence holds the lock and every other contender watches
 * only the znode just before its own, so a release wakes exactly one waiter (no herd).
 *
 * There is no lease to renew: a znode lives as long as its owner's session, so a holder that dies
 * frees the lock when its session times out on the server. The fence is the zxid that created
 * the znode (its czxid, offset: fenceOfZxid): the ensemble orders every write by zxid, so fences grow with the queue
 * of one lock, survive the lock's directory being removed when it empties (a directory per cache
 * key a stranger can name must not stay forever), and compare with invalidationFence(), the
 * zxid of a write to /hmdp/fence: greater than every grant queued before it, less than every
 * grant queued after (lib/lock/fence.ts invalidateFenced).
 *
 * Loss: the moment this process loses its connection it cannot know whether the server will
 * expire its session before it reconnects, and the client only notices a silent server after
 * about 2/3 of the session timeout. So a disconnection (not only an expiry) ends the session on
 * our side: every holder's signal aborts, waiters fail, and the next call opens a new session.
 * The old session's znodes then vanish when the server expires it, which is after we aborted.
 * A waiter (never granted, nothing to lose) whose session ended queues again on a new session
 * while its waitMs lasts, so losing one server of an ensemble delays waiters instead of failing them.
 */
import zookeeper, { type Client, type Event, type Exception, type Stat } from 'node-zookeeper-client';
import { LockUnavailableError, type Grant, type LockBackend } from '@/lib/lock/core';

const ROOT = '/hmdp/locks';
const PREFIX = 'lock-';
/** Written (never read) to take an invalidation's fence: the zxid of that write. */
const FENCE_NODE = '/hmdp/fence';

interface Session {
  client: Client;
  ready: Promise<void>;
  dead: boolean;
  /** Called once with the reason when the session ends (holders abort, waiters fail). */
  onEnd: Set<(detail: string) => void>;
}

export interface ZooKeeperBackend extends LockBackend {
  /** Watches set by waiters on their predecessor, and notifications received (each is one waiter woken by its predecessor's release). */
  readonly stats: { watches: number; wakeups: number };
  /** A fence above every grant queued before this call and below every grant queued after it. */
  invalidationFence(): Promise<number>;
  close(): Promise<void>;
}

type Failure = Error | Exception | null;
const asError = (err: Error | Exception) => (err instanceof Error ? err : new Error(String(err)));

function call<T>(fn: (cb: (err: Failure, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => fn((err, value) => (err ? reject(asError(err)) : resolve(value))));
}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

const isCode = (err: unknown, code: number) => typeof (err as Exception | undefined)?.getCode === 'function' && (err as Exception).getCode() === code;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const sequenceOf = (znode: string) => Number(znode.slice(znode.lastIndexOf('-') + 1));
/**
 * A fence from a zxid (epoch << 32 | counter). Offset by 2^48 so it is above every fence a Redis
 * counter hands out (those start at the clock in ms, about 2^41): a deployment that moves its
 * locks from Redis to ZooKeeper finds no old fence record refusing its writes. Exact in a double
 * (and in Redis' Lua) while the epoch stays below 2^16.
 */
const ZXID_FENCE_BASE = 2 ** 48;
const fenceOfZxid = (b: Buffer) => ZXID_FENCE_BASE + Number(b.readBigUInt64BE(0));
/** A lock name as one path segment ('/' and '.' / '..' would not be one). */
const lockDir = (name: string) => `${ROOT}/${encodeURIComponent(name).replace(/\./g, '%2E')}`;

/** Deletes our znode; bounded, as a request to a server that went away may never be answered. */
const removeZnode = (client: Client, znode: string, ms: number) =>
  within(call<void>((cb) => client.remove(znode, -1, (err) => cb(err, undefined))), ms, 'deleting the znode');

let ids = 0;

export function zookeeperBackend(connect: string, sessionTimeoutMs: number): ZooKeeperBackend {
  if (!connect) throw new Error("nodes: 'zookeeper' needs ZOOKEEPER_CONNECT (host:port, comma separated)");
  let current: Session | undefined;
  const stats = { watches: 0, wakeups: 0 };

  const end = (s: Session, detail: string) => {
    if (s.dead) return;
    s.dead = true;
    if (current === s) current = undefined;
    for (const f of s.onEnd) f(detail);
    s.onEnd.clear();
    // Not synchronously: from inside its 'disconnected' event the client would go on to reconnect
    // (and keep the old session, with its znodes, alive); once that retry has begun it stops.
    setImmediate(() => s.client.close());
  };

  const session = (): Session => {
    if (current && !current.dead) return current;
    const client = zookeeper.createClient(connect, { sessionTimeout: sessionTimeoutMs, spinDelay: 100 });
    // No deadline on the connection itself: a client that has not connected yet keeps trying the
    // servers (each caller bounds its own wait, connected()). Closing and replacing it instead,
    // while the server was down, made node-zookeeper-client throw "Unknown code" from its socket
    // handler, uncaught (seen in lib/lock/zookeeper-restart.test.ts, every run).
    const s: Session = { client, dead: false, onEnd: new Set(), ready: new Promise<void>((resolve) => client.once('connected', () => resolve())) };
    client.on('state', (state) => {
      if (state === zookeeper.State.DISCONNECTED) end(s, 'disconnected from ZooKeeper: the session may expire before we reconnect');
      else if (state === zookeeper.State.EXPIRED) end(s, 'ZooKeeper session expired');
    });
    client.connect();
    return (current = s);
  };

  /** Resolves once `s` is connected; gives up after `ms` (at least the time a session would take to notice a dead server). */
  const connected = (s: Session, ms: number) => within(s.ready, Math.max(ms, sessionTimeoutMs, 2_000), `connecting to ZooKeeper at ${connect}`);

  /** Resolves when `znode` is gone (true) or `ms` passed (false); rejects when the session ends. */
  const goneWithin = (s: Session, znode: string, ms: number) =>
    new Promise<boolean>((resolve, reject) => {
      const ended = (detail: string) => reject(new Error(detail));
      const done = (gone: boolean) => {
        clearTimeout(timer);
        s.onEnd.delete(ended);
        resolve(gone);
      };
      const timer = setTimeout(() => done(false), ms);
      s.onEnd.add(ended);
      s.client.exists(
        znode,
        (_event: Event) => {
          stats.wakeups += 1;
          done(true);
        },
        (err, stat) => {
          if (err) return (clearTimeout(timer), s.onEnd.delete(ended), reject(asError(err)));
          if (!stat) done(true); // released between our listing and the watch
          else stats.watches += 1;
        },
      );
    });

  /** Creates `path` and its parents where missing. */
  const makeDir = (s: Session, path: string) => call<void>((cb) => s.client.mkdirp(path, (err) => cb(err, undefined)));

  /** Our znode in the lock's directory; the directory is made only when missing (a release may have just removed it). */
  const enqueue = async (s: Session, dir: string): Promise<string> => {
    for (let tries = 0; ; tries++) {
      try {
        return await call<string>((cb) => s.client.create(`${dir}/${PREFIX}`, zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL, cb));
      } catch (err) {
        if (!isCode(err, zookeeper.Exception.NO_NODE) || tries >= 5) throw err;
        await makeDir(s, dir);
      }
    }
  };

  const grantOf = (s: Session, znode: string, fence: number): Grant & { lost?: string } => {
    let listener: ((detail: string) => void) | undefined;
    const dir = znode.slice(0, znode.lastIndexOf('/'));
    const grant: Grant & { lost?: string } = {
      fence,
      // The session, not a lease, keeps the grant: the watchdog has nothing to count down.
      validUntil: Number.MAX_SAFE_INTEGER,
      renew: async () => (grant.lost ? null : Number.MAX_SAFE_INTEGER),
      release: async () => {
        s.onEnd.delete(sessionEnded);
        if (s.dead) return; // the znode goes with the session
        // A server that does not answer in time: closing the session frees the znode as well.
        await removeZnode(s.client, znode, sessionTimeoutMs).catch((err: Error) => end(s, err.message));
        // The directory goes when nobody queues in it (else NOT_EMPTY, ignored): lock names a
        // stranger can choose (a cache key per random id) must not leave a znode each forever.
        if (!s.dead) s.client.remove(dir, -1, () => undefined);
      },
      onLost: (f) => (grant.lost ? f(grant.lost) : (listener = f)),
    };
    const sessionEnded = (detail: string) => {
      grant.lost = detail;
      listener?.(detail);
    };
    s.onEnd.add(sessionEnded);
    return grant;
  };

  /** One queueing on one session: the grant, null when still busy at the deadline; throws when the session ends. */
  const attempt = async (s: Session, name: string, deadline: number): Promise<Grant | null> => {
    await connected(s, deadline - Date.now());
    const dir = lockDir(name);
    const path = await enqueue(s, dir);
    const me = path.slice(dir.length + 1);
    try {
      // Read on the server that took our create, so it has it (a session sees its own writes).
      const stat = await call<Stat | null>((cb) => s.client.exists(path, cb));
      if (!stat) throw new Error(`lock "${name}": our znode is gone (session expired)`);
      const fence = fenceOfZxid(stat.czxid);
      for (;;) {
        const children = await call<string[]>((cb) => s.client.getChildren(dir, (err, children) => cb(err, children)));
        const queue = children.filter((c) => c.startsWith(PREFIX)).sort((a, b) => sequenceOf(a) - sequenceOf(b));
        const at = queue.indexOf(me);
        if (at < 0) throw new Error(`lock "${name}": our znode is gone (session expired)`);
        if (at === 0) return grantOf(s, path, fence);
        const left = deadline - Date.now();
        if (left <= 0 || !(await goneWithin(s, `${dir}/${queue[at - 1]}`, left))) break;
      }
    } catch (err) {
      if (!s.dead) await removeZnode(s.client, path, sessionTimeoutMs).catch((e: Error) => end(s, e.message));
      throw err;
    }
    await removeZnode(s.client, path, sessionTimeoutMs).catch((err: Error) => end(s, err.message));
    return null;
  };

  return {
    id: `zookeeper:${++ids}`,
    stats,
    async acquire(name, _leaseMs, waitMs) {
      const deadline = Date.now() + waitMs;
      for (;;) {
        const s = session();
        try {
          return await attempt(s, name, deadline);
        } catch (err) {
          // Never granted, so nothing was held: while the wait lasts, queue again on a new session
          // (one server of an ensemble lost: the client is dropped until a new leader serves).
          const left = deadline - Date.now();
          if (!s.dead || left <= 0) throw err instanceof LockUnavailableError ? err : new LockUnavailableError(name, (err as Error).message);
          await sleep(Math.min(100, left));
        }
      }
    },
    async invalidationFence() {
      const s = session();
      try {
        await connected(s, 0);
        for (let tries = 0; ; tries++) {
          try {
            const stat = await call<Stat>((cb) => s.client.setData(FENCE_NODE, Buffer.alloc(0), -1, cb));
            return fenceOfZxid(stat.mzxid);
          } catch (err) {
            if (!isCode(err, zookeeper.Exception.NO_NODE) || tries >= 2) throw err;
            await makeDir(s, FENCE_NODE);
          }
        }
      } catch (err) {
        throw new LockUnavailableError(FENCE_NODE, (err as Error).message);
      }
    },
    // The call chain holds the znode already: nothing to take on the server, nothing to give back.
    async reenter(_name, grant) {
      return (grant as Grant & { lost?: string }).lost ? null : async () => {};
    },
    async close() {
      if (current) end(current, 'lock backend closed');
    },
  };
}
