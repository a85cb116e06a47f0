/**
 * Waiting without polling (docs/fair-sale.md#waiting-without-polling): a waiting visitor's look may
 * wait in the process (park) until its ticket is admitted, the sale sells out or ends, or the wait
 * it asked for runs out, instead of asking again every second or so. So an admitted visitor hears
 * it at their moment (the room admits in ticket order, and they learn it in that order, not at
 * their next poll), everyone waiting hears 已抢光 together, and a long wait costs no requests.
 *
 * One watcher per sale and process: a timer set to the next parked ticket's admission time
 * (computed from the serving counter and the rate), never more than WATCH_MS away so a sell-out
 * elsewhere is seen; each tick is one look at the room in Redis (no user), and answers every parked
 * look it decides, admitted ones in position order. The parked looks sit in two heaps (by place,
 * by deadline), so a tick costs what it answers, not what waits. A parked look holds no slot of the
 * hot server's in-flight limit (Admission.detach). Bounded: ROOM_MAX_PARKED per process (beyond it a
 * look is answered at once), one parked look per user and sale (a second one answers the first),
 * and no look waits longer than ROOM_LONG_POLL_MS.
 */
import type { DB } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { MinHeap } from '@/lib/min-heap';
import { lookUp, placesInRoom, soldOutAt, viewOf, type RoomSnapshot, type RoomView } from '@/lib/seckill/room/room';
import { roomMetrics } from '@/lib/seckill/room/metrics';

/** The longest a watcher sleeps with looks parked: how late a sell-out or an end decided elsewhere is heard. */
const WATCH_MS = 200;

interface Parked {
  userId: string;
  position: number;
  /** Parked before the start's shuffle: its position changes then (read again after it). */
  beforeShuffle: boolean;
  deadline: number;
  /** Answered (or replaced by the same user's newer look): skipped where a heap still holds it. */
  done: boolean;
  resolve(view: RoomView): void;
  reject(err: unknown): void;
}

interface Watch {
  voucherId: string;
  db: DB;
  redis: RedisClient;
  /** The live parked looks, one per user. */
  parked: Map<string, Parked>;
  /** Live ones after the shuffle (or with no shuffle to wait for), by place; may hold answered ones. */
  byPosition: MinHeap<Parked>;
  /** Every live one by deadline; may hold answered ones. */
  byDeadline: MinHeap<Parked>;
  /** Live ones parked before the start's shuffle (their places change then). */
  beforeShuffle: Parked[];
  timer: ReturnType<typeof setTimeout> | undefined;
  /** When the timer fires (ms, local clock). */
  wakeAt: number;
  ticking: boolean;
  /** The last tick's look (or the parking look's): answers a look whose wait ran out. */
  snap: RoomSnapshot;
  /** The most tickets any look here saw issued: fewer later means Redis forgot the room. */
  maxIssued: number;
}

const g = globalThis as unknown as { __hmdpRoomWatches?: Map<string, Watch>; __hmdpRoomParked?: { n: number } };
const watches = (g.__hmdpRoomWatches ??= new Map<string, Watch>());
const count = (g.__hmdpRoomParked ??= { n: 0 });

/** Looks parked in this process now. */
export function parkedLooks(): number {
  return count.n;
}

/**
 * Answers `view` (the look just made) at once, or parks it: only a waiting ticket holder, for up to
 * `waitMs` (capped at ROOM_LONG_POLL_MS), and only while this process holds fewer than
 * ROOM_MAX_PARKED. The answer is a look as of the moment it is sent.
 */
export function park(db: DB, redis: RedisClient, voucherId: string, userId: string, view: RoomView, snap: RoomSnapshot, waitMs: number): RoomView | Promise<RoomView> {
  const wait = Math.min(waitMs, env.ROOM_LONG_POLL_MS);
  if (view.state !== 'waiting' || view.position === null || wait <= 0 || count.n >= env.ROOM_MAX_PARKED) return view;
  let w = watches.get(voucherId);
  if (!w) {
    w = {
      voucherId,
      db,
      redis,
      parked: new Map(),
      byPosition: new MinHeap((p) => p.position),
      byDeadline: new MinHeap((p) => p.deadline),
      beforeShuffle: [],
      timer: undefined,
      wakeAt: Infinity,
      ticking: false,
      snap,
      maxIssued: snap.issued,
    };
    watches.set(voucherId, w);
  } else if (snap.now >= w.snap.now) {
    w.snap = snap;
  }
  w.maxIssued = Math.max(w.maxIssued, snap.issued);
  // One parked look per user and sale (two tabs, a reload): the older one is answered now.
  const before = w.parked.get(userId);
  if (before) answer(w, before, view);
  const position = view.position;
  const watch = w;
  return new Promise<RoomView>((resolve, reject) => {
    const p: Parked = { userId, position, beforeShuffle: !view.shuffled, deadline: Date.now() + wait, done: false, resolve, reject };
    watch.parked.set(userId, p);
    count.n++;
    if (p.beforeShuffle) watch.beforeShuffle.push(p);
    else watch.byPosition.push(p);
    watch.byDeadline.push(p);
    schedule(watch);
    roomMetrics.parkedLooks(count.n);
  });
}

/** Forgets one parked look (the heaps drop it when it surfaces, or at the next compaction); false if it already was. */
function settle(w: Watch, p: Parked): boolean {
  if (p.done) return false;
  p.done = true;
  w.parked.delete(p.userId);
  count.n--;
  return true;
}

/** Answers one parked look with `view`. */
function answer(w: Watch, p: Parked, view: RoomView): void {
  if (settle(w, p)) p.resolve(view);
}

/** The heaps' top live entry (answered ones on top are dropped on the way). */
function liveTop(h: MinHeap<Parked>): Parked | undefined {
  while (h.size > 0 && h.peek()!.done) h.pop();
  return h.peek();
}

/** When the next parked look may be decided: its admission time, the start, or its deadline; at most WATCH_MS away. */
function nextWake(w: Watch): number {
  const now = Date.now();
  let at = now + WATCH_MS;
  const s = w.snap;
  const soonest = liveTop(w.byDeadline);
  if (soonest && soonest.deadline < at) at = soonest.deadline;
  // Redis's clock and ours agree on this host to a millisecond or so; the tick reads Redis's again.
  if (s.now < s.begin) at = Math.min(at, now + (s.begin - s.now));
  else {
    const first = liveTop(w.byPosition);
    if (first) at = Math.min(at, now + Math.max(0, ((first.position - s.served) * 1000) / s.rate));
  }
  return Math.max(now + 1, Math.ceil(at));
}

function schedule(w: Watch): void {
  if (w.ticking) return; // the tick reschedules when it ends
  const at = nextWake(w);
  if (w.timer !== undefined && w.wakeAt <= at) return;
  if (w.timer !== undefined) clearTimeout(w.timer);
  w.wakeAt = at;
  w.timer = setTimeout(() => void tick(w), at - Date.now());
  w.timer.unref?.();
}

async function tick(w: Watch): Promise<void> {
  w.timer = undefined;
  w.wakeAt = Infinity;
  w.ticking = true;
  try {
    const { snap } = await lookUp(w.db, w.redis, w.voucherId, '', false);
    w.snap = snap;
    const soldOut = soldOutAt(w.redis, w.voucherId, snap);
    if (snap.issued < w.maxIssued) {
      // Fewer tickets than before: Redis lost the room (a restart without persistence). Every
      // parked place is gone with it: they hear so (state none) and join again.
      for (const p of [...w.parked.values()]) answer(w, p, viewOf(w.voucherId, p.userId, null, snap, soldOut));
      w.maxIssued = snap.issued;
    } else if (soldOut) {
      // Everyone waiting hears it now, in place order.
      for (const p of [...w.parked.values()].sort((a, b) => a.position - b.position)) answer(w, p, viewOf(w.voucherId, p.userId, p.position, snap, true));
    } else {
      if (snap.shuffled) await placesAfterShuffle(w);
      // Admitted, in place order, then any whose wait ran out.
      if (snap.now >= snap.begin) {
        const due: Parked[] = [];
        for (let p = liveTop(w.byPosition); p && p.position <= snap.served; p = liveTop(w.byPosition)) due.push(w.byPosition.pop()!);
        if (due.length > 0) await admitDue(w, due, snap);
      }
      expire(w);
    }
  } catch (err) {
    // The sale ended or is gone: every parked look gets that answer. Redis failing: they wait on,
    // up to their deadline, and the next tick tries again.
    const code = (err as { code?: string }).code;
    if (code === 'ENDED' || code === 'NOT_FOUND') {
      for (const p of [...w.parked.values()]) if (settle(w, p)) p.reject(err);
    } else {
      log.warn({ err, voucherId: w.voucherId }, 'waiting room: a parked looks tick failed');
      expire(w);
    }
  } finally {
    w.ticking = false;
  }
  roomMetrics.parkedLooks(count.n);
  if (w.parked.size === 0) watches.delete(w.voucherId);
  else {
    compact(w);
    schedule(w);
  }
}

/**
 * Answers the parked looks the counter reached, in place order, once Redis confirmed each still
 * holds that place (one ZMSCORE): a room Redis forgot and that was re-joined by as many people
 * within one tick shows no drop in `issued`, and its counter may pass an old place nobody holds now.
 * A place gone is answered `none` (join again); a place that changed (re-joined) waits on as that place.
 */
async function admitDue(w: Watch, due: Parked[], snap: RoomSnapshot): Promise<void> {
  let places: (number | null)[];
  try {
    places = await placesInRoom(w.redis, w.voucherId, due.map((p) => p.userId));
  } catch (err) {
    for (const p of due) if (!p.done) w.byPosition.push(p);
    throw err;
  }
  due.forEach((p, i) => {
    const place = places[i] ?? null;
    if (place === null) answer(w, p, viewOf(w.voucherId, p.userId, null, snap, false));
    else if (place === p.position || place <= snap.served) {
      p.position = place;
      answer(w, p, viewOf(w.voucherId, p.userId, place, snap, false));
    } else if (!p.done) {
      p.position = place;
      w.byPosition.push(p);
    }
  });
}

/** Answers the looks whose wait ran out, with the place as the last look saw it. */
function expire(w: Watch): void {
  const now = Date.now();
  for (let p = liveTop(w.byDeadline); p && p.deadline <= now; p = liveTop(w.byDeadline)) answer(w, w.byDeadline.pop()!, viewOf(w.voucherId, p.userId, p.position, w.snap, false));
}

/** Heaps mostly holding answered entries (users who looked again and again) are rebuilt from the live ones. */
function compact(w: Watch): void {
  const live = w.parked.size;
  if (w.byDeadline.size > 2 * live + 64) w.byDeadline.rebuild([...w.parked.values()]);
  if (w.byPosition.size > 2 * live + 64) w.byPosition.rebuild([...w.parked.values()].filter((p) => !p.beforeShuffle));
  if (w.beforeShuffle.length > 2 * live + 64) w.beforeShuffle = w.beforeShuffle.filter((p) => !p.done);
}

/** The start's shuffle gave the pre-start tickets new places: read them for the looks parked before it. */
async function placesAfterShuffle(w: Watch): Promise<void> {
  const stale = w.beforeShuffle.filter((p) => !p.done);
  if (stale.length === 0) {
    w.beforeShuffle = [];
    return;
  }
  // Kept until the read succeeds: a Redis error leaves them for the next tick, not placeless.
  const places = await placesInRoom(w.redis, w.voucherId, stale.map((p) => p.userId));
  // (Looks parked during the read, from a look made just before the shuffle, wait for the next tick.)
  const read = new Set(stale);
  w.beforeShuffle = w.beforeShuffle.filter((p) => !read.has(p) && !p.done);
  stale.forEach((p, i) => {
    const place = places[i];
    p.beforeShuffle = false;
    // No place any more (Redis forgot it): heard as none, join again.
    if (place === null || place === undefined) answer(w, p, viewOf(w.voucherId, p.userId, null, w.snap, false));
    else if (!p.done) {
      p.position = place;
      w.byPosition.push(p);
    }
  });
}
