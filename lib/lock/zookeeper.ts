/**
 * The ZooKeeper lock (the recipe the original 黑马点评 teaches): every contender creates an ephemeral sequential znode
 * under /hmdp/locks/<name>; the lowest sequence holds the lock and every other contender watches
 * only the znode just before its own, so a release wakes exactly one waiter (no herd).
 *
 * There is no lease to renew: a znode lives as long as its owner's session, so a holder that dies
 * frees the lock when its session times out on the server. The fence is the znode's sequence,
 * which ZooKeeper raises for every child ever created under the (never deleted) lock path.
 *
 * Loss: the moment this process loses its connection it cannot know whether the server will
 * expire its session before it reconnects, and the client only notices a silent server after
 * about 2/3 of the session timeout. So a disconnection (not only an expiry) ends the session on
 * our side: every holder's signal aborts, waiters fail, and the next call opens a new session.
 * The old session's znodes then vanish when the server expires it, which is after we aborted.
 */
import zookeeper, { type Client, type Event, type Exception } from 'node-zookeeper-client';
import type { Grant, LockBackend } from '@/lib/lock/core';

const ROOT = '/hmdp/locks';
const PREFIX = 'lock-';

interface Session {
  client: Client;
  ready: Promise<void>;
  dead: boolean;
  /** Called once with the reason when the session ends (holders abort, waiters fail). */
  onEnd: Set<(detail: string) => void>;
}

export interface ZooKeeperBackend extends LockBackend {
  /** Watch notifications received by waiters (each is one waiter woken by its predecessor's release). */
  readonly stats: { wakeups: number };
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

const sequenceOf = (znode: string) => Number(znode.slice(znode.lastIndexOf('-') + 1));
/** A lock name as one path segment ('/' and '.' / '..' would not be one). */
const lockDir = (name: string) => `${ROOT}/${encodeURIComponent(name).replace(/\./g, '%2E')}`;

/** Deletes our znode; bounded, as a request to a server that went away may never be answered. */
const removeZnode = (client: Client, znode: string, ms: number) =>
  within(call<void>((cb) => client.remove(znode, -1, (err) => cb(err, undefined))), ms, 'deleting the znode');

let ids = 0;

export function zookeeperBackend(connect: string, sessionTimeoutMs: number): ZooKeeperBackend {
  if (!connect) throw new Error("nodes: 'zookeeper' needs ZOOKEEPER_CONNECT (host:port, comma separated)");
  let current: Session | undefined;
  const stats = { wakeups: 0 };

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
    const s: Session = { client, dead: false, onEnd: new Set(), ready: Promise.resolve() };
    s.ready = within(
      new Promise<void>((resolve) => client.once('connected', () => resolve())),
      Math.max(sessionTimeoutMs, 2_000),
      `connecting to ZooKeeper at ${connect}`,
    );
    s.ready.catch((err: Error) => end(s, err.message));
    client.on('state', (state) => {
      if (state === zookeeper.State.DISCONNECTED) end(s, 'disconnected from ZooKeeper: the session may expire before we reconnect');
      else if (state === zookeeper.State.EXPIRED) end(s, 'ZooKeeper session expired');
    });
    client.connect();
    return (current = s);
  };

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
        },
      );
    });

  const grantOf = (s: Session, znode: string): Grant & { lost?: string } => {
    let listener: ((detail: string) => void) | undefined;
    const grant: Grant & { lost?: string } = {
      fence: sequenceOf(znode),
      // The session, not a lease, keeps the grant: the watchdog has nothing to count down.
      validUntil: Number.MAX_SAFE_INTEGER,
      renew: async () => (grant.lost ? null : Number.MAX_SAFE_INTEGER),
      release: async () => {
        s.onEnd.delete(sessionEnded);
        if (s.dead) return; // the znode goes with the session
        // A server that does not answer in time: closing the session frees the znode as well.
        await removeZnode(s.client, znode, sessionTimeoutMs).catch((err: Error) => end(s, err.message));
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

  return {
    id: `zookeeper:${++ids}`,
    stats,
    async acquire(name, _leaseMs, waitMs) {
      const deadline = Date.now() + waitMs;
      const s = session();
      await s.ready;
      const dir = lockDir(name);
      await call<void>((cb) => s.client.mkdirp(dir, (err) => cb(err, undefined)));
      const path = await call<string>((cb) => s.client.create(`${dir}/${PREFIX}`, zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL, cb));
      const me = path.slice(dir.length + 1);
      try {
        for (;;) {
          const children = await call<string[]>((cb) => s.client.getChildren(dir, (err, children) => cb(err, children)));
          const queue = children.filter((c) => c.startsWith(PREFIX)).sort((a, b) => sequenceOf(a) - sequenceOf(b));
          const at = queue.indexOf(me);
          if (at < 0) throw new Error(`lock "${name}": our znode is gone (session expired)`);
          if (at === 0) return grantOf(s, path);
          const left = deadline - Date.now();
          if (left <= 0 || !(await goneWithin(s, `${dir}/${queue[at - 1]}`, left))) break;
        }
      } catch (err) {
        if (!s.dead) await removeZnode(s.client, path, sessionTimeoutMs).catch((e: Error) => end(s, e.message));
        throw err;
      }
      await removeZnode(s.client, path, sessionTimeoutMs).catch((err: Error) => end(s, err.message));
      return null;
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
