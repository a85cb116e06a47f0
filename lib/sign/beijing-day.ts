/**
 * The Beijing (UTC+8, no daylight saving) calendar day of an instant. Sign-ins and UV count
 * Beijing days whatever the server's time zone: 23:59 UTC+8 and 00:01 UTC+8 are two days.
 */
const OFFSET_MS = 8 * 3600 * 1000;

export interface BeijingDay {
  year: number;
  /** 1..12 */
  month: number;
  /** 1..31 */
  day: number;
  daysInMonth: number;
  /** 'YYYYMM', the sign bitmap's month. */
  yyyyMM: string;
  /** 'YYYYMMDD', the UV key's day. */
  yyyyMMdd: string;
  /** 'YYYY-MM-DD', for MySQL DATE columns. */
  iso: string;
}

export function beijingDay(at: Date | number): BeijingDay {
  const d = new Date((typeof at === 'number' ? at : at.getTime()) + OFFSET_MS);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth() + 1;
  const day = d.getUTCDate();
  const mm = String(month).padStart(2, '0');
  const dd = String(day).padStart(2, '0');
  return {
    year,
    month,
    day,
    daysInMonth: new Date(Date.UTC(year, month, 0)).getUTCDate(),
    yyyyMM: `${year}${mm}`,
    yyyyMMdd: `${year}${mm}${dd}`,
    iso: `${year}-${mm}-${dd}`,
  };
}

/** The Beijing day `n` days before `at` (n may be 0). */
export function beijingDaysAgo(at: Date | number, n: number): BeijingDay {
  return beijingDay((typeof at === 'number' ? at : at.getTime()) - n * 24 * 3600 * 1000);
}

/** The last Beijing day of the month before `day`'s. */
export function lastDayOfPreviousMonth(day: BeijingDay): BeijingDay {
  // Noon Beijing time on the 1st, minus a day: unambiguous whatever the month length.
  const firstNoon = Date.UTC(day.year, day.month - 1, 1, 12) - OFFSET_MS;
  return beijingDay(firstNoon - 24 * 3600 * 1000);
}
