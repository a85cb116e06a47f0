/**
 * Money and time conversions for the console, shared by server pages and client forms (pure,
 * no server imports). Money is entered in yuan and stored in fen; times are picked and shown in
 * Asia/Shanghai (UTC+8 all year, no daylight saving) and travel as ISO UTC.
 */

const YUAN_RE = /^(\d{1,9})(?:\.(\d{1,2}))?$/;

/** "12.3" → 1230. Exact decimal parsing (no float multiply); null when not a yuan amount. */
export function yuanToFen(input: string): number | null {
  const m = YUAN_RE.exec(input.trim());
  if (!m) return null;
  const fen = Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
  return Number.isSafeInteger(fen) ? fen : null;
}

/** 1230 → "12.30"; whole amounts lose the decimals: 1200 → "12". */
export function fenToYuan(fen: number | string): string {
  const n = Number(fen);
  const yuan = Math.trunc(n / 100);
  const cents = Math.abs(n % 100);
  return cents === 0 ? String(yuan) : `${yuan}.${String(cents).padStart(2, '0')}`;
}

const SHANGHAI_OFFSET_MS = 8 * 3600_000;
const LOCAL_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;

/** A `datetime-local` value read as Shanghai wall time → ISO UTC; null when malformed. */
export function shanghaiLocalToIso(local: string): string | null {
  const m = LOCAL_RE.exec(local);
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  const utc = Date.UTC(y, mo - 1, d, h, mi, s || 0) - SHANGHAI_OFFSET_MS;
  const back = new Date(utc + SHANGHAI_OFFSET_MS);
  // Date.UTC rolls 2025-02-30 over to March; refuse instead of guessing.
  if (back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59) return null;
  return new Date(utc).toISOString();
}

/** ISO (any offset) → the `datetime-local` value of the same instant in Shanghai. */
export function isoToShanghaiLocal(iso: string | Date): string {
  const t = new Date(new Date(iso).getTime() + SHANGHAI_OFFSET_MS);
  return t.toISOString().slice(0, 16);
}

/** ISO → "2025-06-01 20:00:05" in Shanghai time, for display. */
export function formatShanghai(iso: string | Date, withSeconds = true): string {
  const t = new Date(new Date(iso).getTime() + SHANGHAI_OFFSET_MS).toISOString();
  return `${t.slice(0, 10)} ${t.slice(11, withSeconds ? 19 : 16)}`;
}
