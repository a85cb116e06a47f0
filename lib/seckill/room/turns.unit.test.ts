import { describe, expect, it } from 'vitest';
import { keepEarlyTurn, keepTurn, leaveTurn, linesKept, takeTurn, turnsOf, type PlacesOf } from './turns';

/** The room's places for the tests' pre-start buyers: user `e<n>` is at place n after the shuffle. */
const placesOf: PlacesOf = async (users) => users.map((u) => (u.startsWith('e') ? Number(u.slice(1)) : null));

/** Takes the turn of `place` for user `u<place>`: resolves when its grab is sent (recorded in `went`). */
function take(voucherId: string, place: number, went: number[], userId = `u${place}`): Promise<void> {
  return new Promise((sent) =>
    takeTurn(voucherId, place, userId, placesOf, () => {
      went.push(place);
      sent();
    }),
  );
}

describe('turns: buying on admission in place order', () => {
  it('a later place waits for the due places ahead of it and they go in place order', async () => {
    const v = 'turns-order';
    for (const p of [1, 2, 3, 4]) keepTurn(v, p, true, Date.now(), 5_000);
    const went: number[] = [];
    // The buyers come back in the worst order: the last place first.
    const all = [take(v, 4, went), take(v, 3, went), take(v, 2, went)];
    await new Promise((r) => setTimeout(r, 20));
    expect(went).toEqual([]);
    expect(turnsOf(v)).toEqual({ due: 1, early: 0, waiting: 3 });
    void take(v, 1, went);
    // All four sent within that one call, in place order.
    expect(went).toEqual([1, 2, 3, 4]);
    await Promise.all(all);
    expect(turnsOf(v)).toEqual({ due: 0, early: 0, waiting: 0 });
  });

  it('a place that never comes back holds the places behind it only until its moment ends', async () => {
    const v = 'turns-expiry';
    keepTurn(v, 1, true, Date.now(), 80);
    keepTurn(v, 3, true, Date.now(), 5_000);
    const went: number[] = [];
    const t0 = Date.now();
    const two = take(v, 2, went);
    const four = take(v, 4, went);
    await two;
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(60);
    expect(waited).toBeLessThan(2_000);
    // 4 still waits for 3, which is due for seconds more.
    expect(went).toEqual([2]);
    leaveTurn(v, 3, 'u3'); // 3 gave up (its grab failed before its turn)
    await four;
    expect(went).toEqual([2, 4]);
  });

  it('a place with nobody due ahead goes at once, within the call', () => {
    const v = 'turns-free';
    keepTurn(v, 5, true, Date.now(), 5_000);
    const went: number[] = [];
    // Sent within the call itself: nothing to wait for.
    void take(v, 3, went);
    void take(v, 5, went);
    void take('turns-unknown', 1, went);
    expect(went).toEqual([3, 5, 1]);
    expect(turnsOf(v)).toEqual({ due: 0, early: 0, waiting: 0 });
  });

  it('turns off with a zero moment, and ignores a place that is not one', () => {
    const v = 'turns-off';
    keepTurn(v, 1, true, Date.now(), 0);
    keepTurn(v, 0, true, Date.now(), 5_000);
    keepTurn(v, Number.NaN, true, Date.now(), 5_000);
    expect(turnsOf(v)).toEqual({ due: 0, early: 0, waiting: 0 });
    const went: number[] = [];
    void take(v, 2, went);
    expect(went).toEqual([2]);
  });

  it('a place kept while waiting starts its moment when a place behind it buys', async () => {
    const v = 'turns-waiting';
    keepTurn(v, 1, false, Date.now(), 5_000);
    // Seen by nobody yet: no moment running, and nothing behind it to hold.
    expect(turnsOf(v)).toEqual({ due: 1, early: 0, waiting: 0 });
    const went: number[] = [];
    const two = take(v, 2, went);
    await new Promise((r) => setTimeout(r, 20));
    expect(went).toEqual([]);
    await take(v, 1, went);
    await two;
    expect(went).toEqual([1, 2]);
  });

  it('buyers who asked before the start are placed by the shuffle: a place behind theirs waits, one ahead does not', async () => {
    const v = 'turns-early';
    keepEarlyTurn(v, 'e3', Date.now(), 5_000);
    keepEarlyTurn(v, 'e7', Date.now(), 5_000);
    keepEarlyTurn(v, 'gone', Date.now(), 5_000); // left the room: no place
    expect(turnsOf(v)).toEqual({ due: 0, early: 3, waiting: 0 });
    const went: number[] = [];
    // Place 5 and place 1 come first; their places are read (3 and 7 are kept by place now, 'gone' is dropped).
    const five = take(v, 5, went);
    const one = take(v, 1, went);
    await one;
    expect(went).toEqual([1]);
    expect(turnsOf(v)).toMatchObject({ due: 2, early: 0 });
    // 5 waits for 3, not for 7.
    const three = take(v, 3, went, 'e3');
    await Promise.all([three, five]);
    expect(went).toEqual([1, 3, 5]);
    expect(turnsOf(v)).toEqual({ due: 1, early: 0, waiting: 0 });
  });

  it('a buyer arriving just after the moment of the place ahead ran out, before its timer fired, goes after those already waiting', async () => {
    const v = 'turns-expired';
    const now = Date.now();
    keepTurn(v, 1, true, now, 30);
    const went: number[] = [];
    const two = take(v, 2, went);
    // Past 1's moment, but in the same turn of the event loop as the check: the timer has not fired.
    const later = now + 31;
    let three = false;
    takeTurn(v, 3, 'u3', placesOf, () => {
      went.push(3);
      three = true;
    }, later);
    // 2 was waiting: it is sent first, in the same pass, then 3.
    expect(three).toBe(true);
    await two;
    expect(went).toEqual([2, 3]);
  });

  it('a place has one moment per sale: keeping it again neither extends it nor, once it ended, starts another', async () => {
    const v = 'turns-once';
    keepTurn(v, 1, true, Date.now(), 100);
    const went: number[] = [];
    const t0 = Date.now();
    const two = take(v, 2, went);
    // The holder of place 1 keeps looking with buy, admitted, never buying.
    const again = setInterval(() => keepTurn(v, 1, true, Date.now(), 100), 20);
    await two;
    const waited = Date.now() - t0;
    expect(waited).toBeLessThan(1_000);
    // Its moment is over: kept again, it holds nobody.
    keepTurn(v, 1, true, Date.now(), 5_000);
    keepTurn(v, 1, false, Date.now(), 5_000);
    void take(v, 3, went);
    expect(went).toEqual([2, 3]);
    clearInterval(again);
  });

  it('a pre-start buyer who keeps looking stays kept however long before the start they joined; one who stopped a minute ago does not', async () => {
    const v = 'turns-early-long';
    const now = Date.now();
    // Joined two minutes before the start and looked again 50 s ago (the long poll runs out, the page looks again).
    keepEarlyTurn(v, 'e3', now - 120_000, 5_000);
    keepEarlyTurn(v, 'e3', now - 50_000, 5_000);
    // Joined as long ago and closed the page.
    keepEarlyTurn(v, 'e4', now - 120_000, 5_000);
    const went: number[] = [];
    const five = take(v, 5, went);
    await new Promise((r) => setTimeout(r, 50));
    // 5 waits for 3 (still looking), not for 4.
    expect(went).toEqual([]);
    expect(turnsOf(v)).toEqual({ due: 1, early: 0, waiting: 1 });
    await take(v, 3, went, 'e3');
    await five;
    expect(went).toEqual([3, 5]);
  });

  it('a pre-start buyer who leaves, and places that cannot be read, hold nobody', async () => {
    const v = 'turns-early-left';
    keepEarlyTurn(v, 'e1', Date.now(), 5_000);
    const went: number[] = [];
    const two = take(v, 2, went);
    leaveTurn(v, null, 'e1');
    await two;
    expect(went).toEqual([2]);
    const w = 'turns-unreadable';
    keepEarlyTurn(w, 'e1', Date.now(), 5_000);
    await new Promise<void>((sent) => takeTurn(w, 2, 'u2', () => Promise.reject(new Error('redis away')), () => sent()));
    expect(turnsOf(w)).toEqual({ due: 0, early: 0, waiting: 0 });
  });

  it('lines of quiet sales are dropped when many sales have one, so a new sale still gets turns', async () => {
    const long = Date.now() - 60_000;
    for (let i = 0; i < 130; i++) keepTurn(`turns-cap-${i}`, 1, true, long, 1_000);
    expect(linesKept()).toBeLessThanOrEqual(128);
    const v = 'turns-cap-new';
    keepTurn(v, 1, true, Date.now(), 5_000);
    expect(turnsOf(v).due).toBe(1);
    const went: number[] = [];
    const two = take(v, 2, went);
    expect(went).toEqual([]);
    leaveTurn(v, 1, 'u1');
    await two;
    expect(went).toEqual([2]);
  });

  it('a place kept while waiting stays kept while it waits, and holds the places behind once they buy', async () => {
    const v = 'turns-long-wait';
    keepTurn(v, 1, false, Date.now() - 61_000, 5_000);
    // A minute on, nobody behind it has bought: forgotten, not done (it never had a moment).
    keepTurn(v, 5, true, Date.now(), 5_000);
    leaveTurn(v, 5, 'u5');
    expect(turnsOf(v).due).toBe(0);
    // Looked again, still waiting: kept again.
    keepTurn(v, 1, false, Date.now(), 5_000);
    expect(turnsOf(v).due).toBe(1);
    const went: number[] = [];
    const two = take(v, 2, went, 'u2');
    await new Promise((r) => setTimeout(r, 1_100));
    expect(went).toEqual([]);
    void take(v, 1, went);
    await two;
    expect(went).toEqual([1, 2]);
  });
});
