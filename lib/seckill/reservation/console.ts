/**
 * The console's view of a reservation-only sale (docs/fair-sale.md#the-console): reservations per
 * minute, the committed seed hash, and once drawn the seed, the numbers, a page of winners and
 * whether re-running the published draw gives the recorded winners. The caller has already
 * checked that the viewer may see this voucher.
 */
import type { Executor } from '@/lib/db/client';
import { verifyDraw } from '@/lib/seckill/reservation/draw';
import { drawnUsers, findGate, GateMode, reservationsPerMinute, reservedIdPages } from '@/lib/seckill/reservation/reservation.repository';
import { modeName, type ReservationModeName } from '@/lib/seckill/reservation/reservation';

export interface ReservationConsoleView {
  mode: ReservationModeName;
  reserveBegin: string;
  reserved: number;
  perMinute: { minute: string; n: number }[];
  draw: {
    seedHash: string;
    seed: string | null;
    drawnAt: string | null;
    reserved: number | null;
    winners: number | null;
    /** First winners by id (at most WINNERS_SHOWN). */
    winnerList: { userId: string; nickName: string }[];
    /** Re-running the draw from the published seed and today's reservations gives the recorded winners. */
    verified: boolean | null;
  } | null;
}

const WINNERS_SHOWN = 200;

export async function reservationConsoleView(db: Executor, voucherId: string): Promise<ReservationConsoleView | null> {
  const gate = await findGate(db, voucherId);
  if (!gate) return null;
  const perMinute = await reservationsPerMinute(db, voucherId);
  const reserved = perMinute.reduce((s, m) => s + m.n, 0);
  let draw: ReservationConsoleView['draw'] = null;
  if (gate.mode === GateMode.DRAW) {
    let verified: boolean | null = null;
    let winnerList: { userId: string; nickName: string }[] = [];
    if (gate.drawnTime) {
      const all: string[] = [];
      const won: string[] = [];
      for await (const page of reservedIdPages(db, voucherId)) all.push(...page);
      for await (const page of reservedIdPages(db, voucherId, true)) won.push(...page);
      // The draw used the stock of its time; a later add-stock does not change who won.
      verified = verifyDraw({ seed: gate.seed, seedHash: gate.seedHash, stock: gate.winners ?? 0, reserved: all, winners: won }).ok;
      winnerList = await drawnUsers(db, voucherId, WINNERS_SHOWN);
    }
    draw = {
      seedHash: gate.seedHash,
      seed: gate.drawnTime ? gate.seed : null,
      drawnAt: gate.drawnTime?.toISOString() ?? null,
      reserved: gate.reserved,
      winners: gate.winners,
      winnerList,
      verified,
    };
  }
  return { mode: modeName(gate.mode), reserveBegin: gate.reserveBegin.toISOString(), reserved, perMinute: perMinute.map((m) => ({ minute: m.minute.toISOString(), n: m.n })), draw };
}
