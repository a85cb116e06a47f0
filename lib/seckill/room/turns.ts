/**
 * Turns for buying on admission (docs/fair-sale.md#in-turn): in one web process, an admitted buyer's
 * grab is not sent to Redis before the grabs of the places ahead of theirs that are still due.
 *
 * A place is *due* when this process told its holder, who asked to buy, where they stand but could
 * not buy for them yet (admitted with the gate's challenge still to solve, or waiting after the
 * start, when the place is final): `keepTurn`. For ROOM_TURN_MS from its admission (for a waiting
 * place: from the first moment a later place is buying, which is after its admission), a buyer with
 * a later place waits (`takeTurn`) until that place has bought, given up (`leaveTurn`) or run out
 * of its moment. So a buyer admitted at once who solves the challenge a little faster than the one
 * just ahead, or whose request is read first, does not buy first. **A place has one moment per
 * sale**: keeping it again never extends it, and a place whose moment ended, that bought or left is
 * not kept again — so a holder who never comes back (or keeps looking without buying) delays the
 * places behind by at most ROOM_TURN_MS, once; moments run side by side, not one after another.
 * With holds the unit is the admitted user's either way: turns decide only the order in which the
 * winners' orders are made.
 *
 * A buyer who joined before the start asked to buy has no final place until the shuffle: they are
 * kept by user (`keepEarlyTurn`), and the first buyer to take a turn after the start has their
 * places read from the room (one round trip) and kept like the others before anyone goes.
 *
 * Waiters are released in place order within one synchronous pass that sends each one's grab (no
 * await between: not even a promise's continuation can slip in), so their grab scripts reach Redis
 * (one connection per node, in order) in place order. Per process: buyers on different web
 * processes are not ordered against each other.
 */
import { env } from '@/lib/env';

interface Waiter {
  place: number;
  /** Sends this buyer's grab. */
  go: () => void;
}

interface Due {
  /** Until when the places behind wait for it (epoch ms); unset while it has not been seen admitted. */
  until?: number;
  /** Forgotten then (the end of its moment; for a place never seen admitted, a minute after it was kept). */
  forgetAt: number;
}

interface Line {
  due: Map<number, Due>;
  /** Places that had their turn (bought, left, or their moment ended): never kept again. Oldest first. */
  done: Set<number>;
  /** Buyers who asked before the start, by user id: their places are known after the shuffle. */
  early: Map<string, number>;
  /** Their places being read: nobody goes meanwhile. */
  resolving?: Promise<void>;
  /** Buyers waiting, by place. */
  waiting: Waiter[];
  timer?: NodeJS.Timeout;
  /** When a buyer last kept or took a turn here (a quiet line is dropped after QUIET_MS). */
  touched: number;
}

/** Where the room put these users (null: not in it), read once the pre-start tickets are shuffled. */
export type PlacesOf = (userIds: string[]) => Promise<(number | null)[]>;

/** Sales with a line in this process at most, and due places (and remembered done ones) per sale: beyond them a turn is not kept (nobody waits for it). */
const MAX_LINES = 128;
const MAX_DUE = 10_000;
/** A line nobody kept or took a turn in for this long, with nothing due or waiting, is dropped (with what it remembers as done). */
const QUIET_MS = 10 * 60_000;
/** A place waiting for its admission (or a pre-start buyer) is forgotten after this long if nobody behind it buys first. */
const WAITING_FORGET_MS = 60_000;

const g = globalThis as unknown as { __hmdpTurns?: Map<string, Line> };
// Shared by the web server's own import and the Next build's copy of this module.
const lines = (g.__hmdpTurns ??= new Map<string, Line>());

function lineOf(voucherId: string, now: number): Line | undefined {
  let line = lines.get(voucherId);
  if (!line) {
    if (lines.size >= MAX_LINES / 4) sweep(now, false);
    if (lines.size >= MAX_LINES) sweep(now, true);
    if (lines.size >= MAX_LINES) return undefined;
    line = { due: new Map(), done: new Set(), early: new Map(), waiting: [], touched: now };
    lines.set(voucherId, line);
  }
  line.touched = now;
  return line;
}

/**
 * Drops the lines nobody waits in and whose kept turns have all run out: those quiet for QUIET_MS,
 * or (`all`, at MAX_LINES) every such line. A line is otherwise kept through its sale, so the places
 * that had their turn are never kept again.
 */
function sweep(now: number, all: boolean): void {
  for (const [voucherId, line] of lines) {
    if (line.waiting.length > 0 || line.resolving || (!all && now - line.touched < QUIET_MS)) continue;
    forgetExpired(line, now);
    if (line.due.size === 0 && line.early.size === 0) {
      clearTimeout(line.timer);
      lines.delete(voucherId);
    }
  }
}

function forgetExpired(line: Line, now: number): void {
  for (const [p, due] of line.due) if (due.forgetAt <= now) expire(line, p, due);
  forgetExpiredEarly(line, now);
}

function forgetExpiredEarly(line: Line, now: number): void {
  for (const [u, forgetAt] of line.early) if (forgetAt <= now) line.early.delete(u);
}

/** A kept place's time is up: its moment ended (done: not kept again), or, never seen admitted, it is simply forgotten. */
function expire(line: Line, place: number, due: Due): void {
  if (due.until === undefined) line.due.delete(place);
  else finish(line, place);
}

/** This place had its turn: no longer due, and never kept again (the oldest such places are forgotten past MAX_DUE). */
function finish(line: Line, place: number): boolean {
  const was = line.due.delete(place);
  line.done.add(place);
  if (line.done.size > MAX_DUE) line.done.delete(line.done.values().next().value!);
  return was;
}

/**
 * This place's holder asked to buy and will, once through the gate (admitted) or at their turn
 * (waiting after the start, `admitted` false: its moment starts once a later place buys): the
 * places behind wait for them a moment — one per place and sale: keeping a place again never
 * extends its moment, and a place that had its turn is not kept again.
 */
export function keepTurn(voucherId: string, place: number, admitted: boolean, now = Date.now(), turnMs = env.ROOM_TURN_MS): void {
  if (turnMs <= 0 || !Number.isSafeInteger(place) || place < 1) return;
  const line = lineOf(voucherId, now);
  if (!line || line.done.has(place)) return;
  const kept = line.due.get(place);
  // A running moment stays as it is; a place without one (new, or still waiting: it holds nobody)
  // starts its moment now if admitted, else is kept a minute more.
  if (kept?.until !== undefined || (!kept && line.due.size >= MAX_DUE)) return;
  line.due.set(place, admitted ? { until: now + turnMs, forgetAt: now + turnMs } : { forgetAt: now + WAITING_FORGET_MS });
}

/**
 * A buyer who asked before the start (no final place yet): kept until the first turn after the start
 * reads where the shuffle put them, or a minute after their last look (a visitor who waits ten
 * minutes for the start, looking again now and then, stays kept; one who closed the page is let go).
 */
export function keepEarlyTurn(voucherId: string, userId: string, now = Date.now(), turnMs = env.ROOM_TURN_MS): void {
  if (turnMs <= 0) return;
  const line = lineOf(voucherId, now);
  if (!line || (!line.early.has(userId) && line.early.size >= MAX_DUE)) return;
  line.early.set(userId, now + WAITING_FORGET_MS);
}

/** This buyer is done with their turn (bought elsewhere, refused, failed): the places behind need not wait for them. */
export function leaveTurn(voucherId: string, place: number | null, userId: string): void {
  const line = lines.get(voucherId);
  if (!line) return;
  const left = line.early.delete(userId);
  const finished = place !== null && Number.isSafeInteger(place) && finish(line, place);
  if (finished || left) pump(voucherId, line);
}

/**
 * Calls `send` (which must send the grab before it returns, no await first) when this buyer's turn
 * comes: at once when no place ahead is due or waiting in this process, else once every such place
 * has bought, left or run out of time — then in the same synchronous pass as the others released
 * with it, in place order, so no continuation can slip in between. The buyer stops being due: they
 * are here. Pre-start buyers still kept by user have their places read first (`placesOf`).
 * True when sent at once; false when the buyer waits (perhaps only for this pass).
 */
export function takeTurn(voucherId: string, place: number, userId: string, placesOf: PlacesOf, send: () => void, now = Date.now()): boolean {
  const line = lines.get(voucherId);
  if (!line) {
    send();
    return true;
  }
  line.touched = now;
  finish(line, place);
  line.early.delete(userId);
  forgetExpiredEarly(line, now);
  const aheadWaits = line.waiting.length > 0 && line.waiting[0]!.place < place;
  if (line.early.size === 0 && !line.resolving && !aheadWaits && blocker(line, place, now) === undefined) {
    send();
    // The places behind that waited only for this one go after it.
    if (line.waiting.length > 0) pump(voucherId, line, now);
    return true;
  }
  const at = line.waiting.findIndex((w) => w.place > place);
  line.waiting.splice(at < 0 ? line.waiting.length : at, 0, { place, go: send });
  if (line.early.size > 0 && !line.resolving) resolveEarly(voucherId, line, placesOf);
  // Waiters ahead whose blockers ran out a moment ago (their timer not yet fired) go first, then this one.
  else if (!line.resolving) pump(voucherId, line, now);
  return false;
}

/** Reads the places of the pre-start buyers still kept by user and keeps them by place; then lets the waiters go in order. */
function resolveEarly(voucherId: string, line: Line, placesOf: PlacesOf): void {
  const users = [...line.early.keys()];
  let read: Promise<(number | null)[]>;
  try {
    read = placesOf(users);
  } catch (err) {
    read = Promise.reject(err);
  }
  line.resolving = read
    .then(
      (places) => {
        const now = Date.now();
        users.forEach((u, i) => {
          const place = places[i];
          // Still kept (not here meanwhile) and in the room: admitted by now if anyone behind is buying.
          if (line.early.delete(u) && typeof place === 'number' && place >= 1 && !line.due.has(place) && !line.done.has(place) && line.due.size < MAX_DUE) {
            line.due.set(place, { forgetAt: now + WAITING_FORGET_MS });
          }
        });
      },
      // Unreadable (Redis away): nobody waits for them.
      () => users.forEach((u) => line.early.delete(u)),
    )
    .finally(() => {
      line.resolving = undefined;
      pump(voucherId, line);
    });
}

/**
 * The earliest deadline of a due place ahead of `place`, whose holder is buying and so admitted
 * (undefined: none is due). A place ahead not yet seen admitted is admitted by now (the counter
 * admits in place order): its moment starts here. Forgets places whose moment has passed.
 */
function blocker(line: Line, place: number, now: number, turnMs = env.ROOM_TURN_MS): number | undefined {
  let soonest: number | undefined;
  for (const [p, due] of line.due) {
    if (p < place && due.until === undefined) {
      due.until = now + turnMs;
      due.forgetAt = due.until;
    }
    if (due.forgetAt <= now) {
      expire(line, p, due);
      continue;
    }
    if (p < place && (soonest === undefined || due.until! < soonest)) soonest = due.until;
  }
  return soonest;
}

/** The smallest place still due (Infinity: none), forgetting places whose moment has passed. */
function firstDue(line: Line, now: number): number {
  let first = Infinity;
  for (const [p, due] of line.due) {
    if (due.forgetAt <= now) expire(line, p, due);
    else if (p < first) first = p;
  }
  return first;
}

/**
 * Releases, in place order, every waiter no due place is ahead of (one look at the due places, not
 * one per waiter); stops at the first that must still wait (those behind it wait for the same place).
 */
function pump(voucherId: string, line: Line, now = Date.now()): void {
  if (line.resolving) return;
  const first = firstDue(line, now);
  while (line.waiting.length > 0 && line.waiting[0]!.place < first) {
    const next = line.waiting.shift()!;
    try {
      next.go();
    } catch {
      // A send that throws is its own caller's failure; the others still go.
    }
  }
  if (line.waiting.length > 0) schedule(voucherId, line, now);
}

/** A timer for the moment the first waiter's blockers run out (a holder who never comes back). */
function schedule(voucherId: string, line: Line, now: number): void {
  clearTimeout(line.timer);
  line.timer = undefined;
  const first = line.waiting[0];
  const until = first ? blocker(line, first.place, now) : undefined;
  if (until === undefined) return;
  line.timer = setTimeout(() => pump(voucherId, line), Math.max(1, until - Date.now()));
  line.timer.unref();
}

/** For tests: how many places are due (by place and by user) and how many buyers wait, for one sale in this process. */
export function turnsOf(voucherId: string): { due: number; early: number; waiting: number } {
  const line = lines.get(voucherId);
  return { due: line?.due.size ?? 0, early: line?.early.size ?? 0, waiting: line?.waiting.length ?? 0 };
}

/** For tests: how many sales have a line in this process. */
export function linesKept(): number {
  return lines.size;
}
