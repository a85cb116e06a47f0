/** A sale may be split over at most this many stock buckets (docs/buckets.md); more than masters buys nothing. No imports: the console's form schema reads it too. */
export const MAX_BUCKETS = 16;
