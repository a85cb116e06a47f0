/**
 * What one person does in the real-concurrency spike (e2e/bench/spike.ts), as a pluggable function:
 * the harness opens each user's own connection at their moment, hands the flow a `send` that counts
 * every answer and socket error the same way for every flow, and records the flow's final answer.
 * A flow is named by `npm run bench -- spike --strategy <name>`. Today: `grab` (log in is done, the
 * session token is the user's; grab once, retry a 503 after Retry-After with jitter, like a client).
 * `room`: the waiting room, buying on admission (join asking to buy, which keeps the place's turn →
 * solve the challenge the join's answer carries → join again with the solution, `buy` and a wait,
 * answered with the purchase at the turn).
 * `room-token`: the page's path without its click (join → looks → once admitted, the token and the
 * grab as one request, `POST …/room/token` with `grab: true`). Both mark 'ticket' when the first
 * answer is a ticket with a position ('soldoutFirst' when it is 已抢光 instead).
 */
import { hash } from 'node:crypto';
import type { UserResponse } from './user-client';

export interface SpikeUser {
  /** Position in the whole spike (0 … users − 1): decides when the user arrives. */
  index: number;
  /** The user's session token (Bearer). */
  token: string;
}

/** An answer, or a socket-level failure (status 0, `error` the code: ECONNRESET, TIMEOUT, ...). */
export type SendResult = UserResponse & { error?: string };

export interface FlowContext {
  user: SpikeUser;
  /** The grab path of the sale under test (the bare server answers any path alike). */
  path: string;
  /** Flow options from the command line (`--flow-<name> value`), for flows that need more (a room's paths). */
  options: Record<string, string>;
  /** A request on the user's own connection, with their Bearer token (and `headers`); never throws. */
  send(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<SendResult>;
  sleep(ms: number): Promise<void>;
  /** The user reached a named step (kept as ms since the spike's start, per step: first time only). */
  mark(step: string): void;
}

export interface FlowOutcome {
  /** The final answer's status (0: none, the user gave up after socket errors). */
  status: number;
  /** Its error code, if any (SOLD_OUT, ...), or GAVE_UP. A room's `soldout` look is status 200, code SOLD_OUT. */
  code?: string;
  /** The room flow: the user's last known place in the room (after the start's shuffle, if they looked after it). */
  position?: number;
  /** The room flow: true when the user posted a grab (admitted, passed the gate, holding a token). */
  grabbed?: boolean;
}

export type UserFlow = (ctx: FlowContext) => Promise<FlowOutcome>;

/** How long a client waits before retrying: the server's Retry-After (1 s if none) × a jitter in [0.5, 1.5). */
export function retryDelayMs(r: SendResult, random: () => number = Math.random): number {
  const after = Number(r.headers?.['retry-after']);
  const base = Number.isFinite(after) && after > 0 ? Math.min(after, 30) * 1000 : 1000;
  return base * (0.5 + random());
}

export function errorCode(json: unknown): string | undefined {
  const code = (json as { error?: { code?: unknown } } | undefined)?.error?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A 503 or a broken connection is worth another try; any other answer is the user's final one. */
const retryable = (r: SendResult) => r.status === 503 || r.status === 0;

/** How long the page's next look waits (app/(shop)/seckill/[voucherId]/room/room-view.tsx): a quarter of the estimate, 1–5 s. */
export function lookDelayMs(estimateMs: number | null | undefined): number {
  return Math.round(Math.min(5000, Math.max(1000, (estimateMs ?? 4000) / 4)));
}

interface Look {
  state: 'none' | 'waiting' | 'admitted' | 'soldout' | 'full';
  position: number | null;
  estimateMs: number | null;
  ticket: string | null;
  /** The bot gate's challenge, in an admitted answer. */
  challenge?: Challenge;
}

export interface Challenge {
  algorithm: string;
  challenge: string;
  maxnumber: number;
  salt: string;
  signature: string;
}

const dataOf = <T>(r: SendResult): T | undefined => (r.json as { data?: T } | undefined)?.data;

/**
 * What the altcha widget submits: base64 of the JSON payload with the number n in [0, maxnumber]
 * whose SHA-256(salt + n), in hex, is the challenge. Native one-shot SHA-256 (`crypto.hash`,
 * ~0.5 µs a hash, half of createHash's cost, as a script would; altcha-lib's own solver takes
 * ~50 µs a hash here): the bench measures the server, not 20 000 phones' hashing on the server's
 * own two cores.
 */
export function solveAltcha(c: Challenge): string | null {
  const n = altchaNumber(c);
  return n === null ? null : Buffer.from(JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number: n, salt: c.salt, signature: c.signature })).toString('base64');
}

/** The number n in [0, maxnumber] whose SHA-256(salt + n) is the challenge (null: not SHA-256, or none). */
export function altchaNumber(c: Pick<Challenge, 'algorithm' | 'challenge' | 'salt'> & { maxnumber?: number }): number | null {
  if (c.algorithm !== 'SHA-256') return null;
  const max = c.maxnumber ?? 1e6;
  for (let n = 0; n <= max; n++) if (hash('sha256', c.salt + n) === c.challenge) return n;
  return null;
}

/** Flows whose steps only the product answers: the bare server takes the same spike with this flow instead. */
export const bareFlow: Record<string, string> = { room: 'grab', 'room-token': 'grab' };

/**
 * A room flow's user: their last known place, whether they asked to buy, and how an answer ends
 * their flow or is retried — what both room flows share.
 */
class RoomVisitor {
  position: number | undefined;
  ticket: string | undefined;
  grabbed = false;
  private failures = 0;
  private first = true;

  constructor(
    private readonly ctx: FlowContext,
    readonly roomPath: string,
  ) {}

  /** The user's final outcome. */
  end(status: number, code?: string): FlowOutcome {
    return { status, code, position: this.position, grabbed: this.grabbed };
  }

  /** A refused answer: null after waiting when it is worth another try (a 503 or a broken connection, up to `attempts` in all), else the final outcome. */
  async retryOrEnd(r: SendResult): Promise<FlowOutcome | null> {
    if (!retryable(r)) return this.end(r.status, errorCode(r.json));
    if (++this.failures >= Number(this.ctx.options.attempts ?? 30)) return this.end(r.status, 'GAVE_UP');
    await this.ctx.sleep(retryDelayMs(r));
    return null;
  }

  /** An answer of the room: the first one marks 'ticket' (a place) or 'soldoutFirst' (已抢光: no ticket for nothing); a place is kept. */
  saw(look: Look | undefined): void {
    if (this.first) {
      this.first = false;
      if (look && look.ticket && typeof look.position === 'number' && look.position > 0) this.ctx.mark('ticket');
      else if (look && look.state === 'soldout') this.ctx.mark('soldoutFirst');
      else if (look && look.state === 'full') this.ctx.mark('fullFirst');
    }
    if (typeof look?.position === 'number') this.position = look.position;
    if (look?.ticket) this.ticket = look.ticket;
  }

  /** The ticket header a join again shows (the room never answers a ticket holder 名额已满 from memory). */
  get ticketHeader(): Record<string, string> | undefined {
    return this.ticket ? { 'x-room-ticket': this.ticket } : undefined;
  }

  /** The gate's solution of `challenge` (or of one asked for now): the solution, an outcome to end with, or null to go round again after a retried answer. */
  async solve(challenge: Challenge | undefined): Promise<string | FlowOutcome | null> {
    if (!challenge) {
      const c = await this.ctx.send('GET', `${this.roomPath}/challenge`);
      if (c.status !== 200) return this.retryOrEnd(c);
      challenge = c.json as Challenge;
    }
    const solved = solveAltcha(challenge);
    if (!solved) return this.end(200, 'UNSOLVED');
    this.ctx.mark('solved');
    return solved;
  }
}

export const flows: Record<string, UserFlow> = {
  async grab(ctx) {
    const maxAttempts = Number(ctx.options.attempts ?? 30);
    for (let attempt = 1; ; attempt++) {
      const r = await ctx.send('POST', ctx.path);
      if (!retryable(r)) return { status: r.status, code: errorCode(r.json) };
      if (attempt >= maxAttempts) return { status: r.status, code: 'GAVE_UP' };
      await ctx.sleep(retryDelayMs(r));
    }
  },

  /**
   * The waiting room, buying on admission (docs/fair-sale.md#buying-on-admission), as an app would:
   * join asking to buy (the place is fixed at the first contact, whatever the solver's speed, and
   * keeps its turn, docs/fair-sale.md#in-turn; the answer carries the gate's challenge), solve, then join again with the solution, `buy` and the page's wait: an
   * admitted user's answer is the purchase, a waiting one's is held until the turn and then is the
   * purchase (the room buys for the waiting in place order). Two requests per buyer; a wait that
   * runs out goes on with looks (`buy=1`, a long poll).
   */
  async room(ctx) {
    const u = new RoomVisitor(ctx, `${ctx.path}/room`);
    let altcha: string | undefined;
    let passed = false;
    let waitMs = 0;
    for (let joined = false; ; ) {
      let r: SendResult;
      let held = false;
      const started = Date.now();
      // The first join asks to buy: admitted at once, the place keeps its turn while this user solves.
      if (!joined) r = await ctx.send('POST', u.roomPath, { buy: true });
      else if (altcha !== undefined && !passed) {
        // The solution once (a join again keeps the place), buying when the turn comes.
        ctx.mark('token');
        u.grabbed = true;
        held = true;
        r = await ctx.send('POST', u.roomPath, { altcha, buy: true, wait: waitMs }, u.ticketHeader);
        if (r.status === 200) passed = true;
      } else {
        held = true;
        r = await ctx.send('GET', `${u.roomPath}?wait=${waitMs}&buy=1`);
      }
      if (r.status !== 200) {
        const end = await u.retryOrEnd(r);
        if (end) return end;
        continue;
      }
      const look = dataOf<Look & { purchase?: { orderId: string } }>(r);
      if (!look) return u.end(r.status, errorCode(r.json));
      u.saw(look);
      joined = true;
      if (look.purchase) return u.end(200);
      if (look.state === 'soldout') return u.end(200, 'SOLD_OUT');
      if (look.state === 'full') return u.end(200, 'FULL');
      if (look.state === 'none') return u.end(200, 'NO_TICKET');
      if (look.state === 'admitted') ctx.mark('admitted');
      if (altcha === undefined) {
        const solved = await u.solve(look.challenge);
        if (solved === null) continue;
        if (typeof solved !== 'string') return solved;
        altcha = solved;
        waitMs = look.state === 'admitted' ? 0 : lookDelayMs(look.estimateMs);
        continue;
      }
      if (look.state === 'admitted') return u.end(200, 'ADMITTED_NOT_BOUGHT');
      // Held, but answered before its wait ran out while still waiting: the server did not hold it.
      const early = held ? waitMs - (Date.now() - started) : 0;
      waitMs = lookDelayMs(look.estimateMs);
      if (early > 0) await ctx.sleep(early);
    }
  },

  /**
   * The waiting room (docs/fair-sale.md#the-waiting-room) as its page walks it. Final answers: a
   * `soldout` look (200, SOLD_OUT), the token route's or the grab's refusal, the grab's 200. A 503
   * or a broken connection is retried after Retry-After with jitter, like the grab flow.
   */
  async 'room-token'(ctx) {
    const u = new RoomVisitor(ctx, `${ctx.path}/room`);
    let ticket: string | null = null;
    let challenge: Challenge | undefined;
    // Join, then look (a long poll, waiting up to the page's interval) until admitted or sold out.
    let waitMs = 0;
    for (let joined = false; ; ) {
      const started = Date.now();
      const r = await ctx.send(joined ? 'GET' : 'POST', joined ? `${u.roomPath}?wait=${waitMs}` : u.roomPath);
      const look = r.status === 200 ? dataOf<Look>(r) : undefined;
      u.saw(look);
      if (!look) {
        const end = await u.retryOrEnd(r);
        if (end) return end;
        continue;
      }
      joined = true;
      ticket = look.ticket ?? ticket;
      if (look.state === 'soldout') return u.end(200, 'SOLD_OUT');
      if (look.state === 'full') return u.end(200, 'FULL');
      if (look.state === 'admitted') {
        challenge = look.challenge;
        break;
      }
      if (look.state === 'none') return u.end(200, 'NO_TICKET');
      // Answered before the wait ran out while still waiting: the server did not hold the look.
      const early = waitMs - (Date.now() - started);
      waitMs = lookDelayMs(look.estimateMs);
      if (early > 0) await ctx.sleep(early);
    }
    ctx.mark('admitted');
    // The bot gate: solved once (the admitted answer carries the challenge); then the token and
    // the grab in one request (`grab: true`), answered as the grab. A 503 asks again without
    // solving again.
    let altcha: string | undefined;
    for (;;) {
      if (altcha === undefined) {
        const solved = await u.solve(challenge);
        if (solved === null) continue;
        if (typeof solved !== 'string') return solved;
        altcha = solved;
      }
      // 'token': when the user asked for their grab token (here with the grab itself): nobody may
      // hear 已抢光 before the last winner did.
      ctx.mark('token');
      u.grabbed = true;
      const g = await ctx.send('POST', `${u.roomPath}/token`, { ticket, altcha, grab: true });
      const end = await u.retryOrEnd(g);
      if (end) return end;
    }
  },
};
