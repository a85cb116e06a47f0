/**
 * How a bucketed sale's total stock is split over its buckets (docs/buckets.md#preheat-and-repair):
 * a pure function, so every case is a unit test.
 */

/**
 * Each bucket's share ("initial" of the bucket) after a preheat.
 *   total     the sale's initial stock in MySQL
 *   current   each bucket's share in Redis now, null where the bucket has no meta (never preheated,
 *             or lost in a failover)
 *   inFlight  units taken out of a donor and not delivered yet (they belong to no bucket)
 *   buyers    each bucket's buyers after the preheat (a share never goes below them when lowered)
 * The shares plus inFlight always sum to total: a first preheat splits evenly; a lost bucket gets
 * what the others and the moves in flight do not hold; what is left over after that (an
 * add-stock, or a failover that rolled a bucket's share back) is spread evenly, and a shortfall
 * is taken from the buckets with the most unsold units.
 */
export function bucketShares(total: number, current: (number | null)[], inFlight: number, buyers: number[]): number[] {
  const n = current.length;
  const even = (units: number, over: number[]) => {
    const out = new Map<number, number>();
    over.forEach((b, k) => out.set(b, Math.floor(units / over.length) + (k < units % over.length ? 1 : 0)));
    return out;
  };
  if (current.every((c) => c === null)) {
    const split = even(Math.max(0, total - inFlight), [...Array(n).keys()]);
    return [...Array(n).keys()].map((b) => split.get(b)!);
  }
  const shares = current.map((c) => c ?? 0);
  const missing = current.flatMap((c, b) => (c === null ? [b] : []));
  let rest = total - inFlight - shares.reduce((a, s) => a + s, 0);
  if (rest > 0) {
    // To the lost buckets first; with none lost, to every bucket.
    for (const [b, units] of even(rest, missing.length > 0 ? missing : [...Array(n).keys()])) shares[b]! += units;
    rest = 0;
  }
  while (rest < 0) {
    let richest = -1;
    for (let b = 0; b < n; b++) if (shares[b]! - (buyers[b] ?? 0) > 0 && (richest < 0 || shares[b]! - buyers[b]! > shares[richest]! - buyers[richest]!)) richest = b;
    if (richest < 0) break; // nothing unsold left to take: MySQL's stock guard has the last word
    shares[richest]! -= 1;
    rest++;
  }
  return shares;
}
