/**
 * What one person does in the real-concurrency spike (e2e/bench/spike.ts), as a pluggable function:
 * the harness opens each user's own connection at their moment, hands the flow a `send` that counts
 * every answer and socket error the same way for every flow, and records the flow's final answer.
 * A flow is named by `npm run bench -- spike --strategy <name>`. Today: `grab` (log in is done, the
 * session token is the user's; grab once, retry a 503 after Retry-After with jitter, like a client).
 * A waiting-room flow (join the room → poll the position → solve the gate → grab with the token)
 * is one more entry here, marking 'ticket' when its first answer is a ticket.
 */
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
  /** A request on the user's own connection, with their Bearer token; never throws. */
  send(method: string, path: string, body?: unknown): Promise<SendResult>;
  sleep(ms: number): Promise<void>;
  /** The user reached a named step (kept as ms since the spike's start, per step: first time only). */
  mark(step: string): void;
}

export interface FlowOutcome {
  /** The final answer's status (0: none, the user gave up after socket errors). */
  status: number;
  /** Its error code, if any (SOLD_OUT, ...), or GAVE_UP. */
  code?: string;
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
};
