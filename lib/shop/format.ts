/** Display helpers shared by the shop pages (server and client); pure, no server imports. */

/** 4750 fen → "47.5". */
export function yuan(fen: number): string {
  return (fen / 100).toFixed(2).replace(/\.?0+$/, '');
}

/** 860 → "860m", 12345 → "12.3km". */
export function distanceText(metres: number): string {
  return metres < 1000 ? `${Math.round(metres)}m` : `${(metres / 1000).toFixed(metres < 100_000 ? 1 : 0)}km`;
}

/** Score × 10 → "4.6". */
export function scoreText(score10: number): string {
  return (score10 / 10).toFixed(1);
}

const shanghai = new Intl.DateTimeFormat('zh-CN', { timeZone: 'Asia/Shanghai', month: 'numeric', day: 'numeric', hour: '2-digit', minute: '2-digit', hour12: false });

/** An ISO instant as Asia/Shanghai wall time, e.g. "11/21 09:00". */
export function shanghaiTime(iso: string): string {
  return shanghai.format(new Date(iso));
}
