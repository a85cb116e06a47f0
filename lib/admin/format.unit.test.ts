import { describe, expect, it } from 'vitest';
import { fenToYuan, formatShanghai, isoToShanghaiLocal, shanghaiLocalToIso, yuanToFen } from '@/lib/admin/format';

describe('money', () => {
  it.each([
    ['12', 1200],
    ['12.3', 1230],
    ['12.34', 1234],
    ['0.01', 1],
    [' 59 ', 5900],
    ['0.29', 29], // 0.29 * 100 is 28.999… in floating point
  ])('yuanToFen(%s) = %d', (yuan, fen) => expect(yuanToFen(yuan)).toBe(fen));

  it.each(['', '-1', '1.234', 'abc', '1e3', '1,000', '.5'])('yuanToFen(%j) is refused', (bad) => expect(yuanToFen(bad)).toBeNull());

  it('fenToYuan', () => {
    expect(fenToYuan(1200)).toBe('12');
    expect(fenToYuan(1230)).toBe('12.30');
    expect(fenToYuan('5')).toBe('0.05');
  });
});

describe('Asia/Shanghai times', () => {
  it('a picked wall time is 8 hours ahead of UTC, whatever the browser zone', () => {
    expect(shanghaiLocalToIso('2025-06-01T20:00')).toBe('2025-06-01T12:00:00.000Z');
    expect(shanghaiLocalToIso('2025-01-01T07:30')).toBe('2024-12-31T23:30:00.000Z');
    expect(isoToShanghaiLocal('2024-12-31T23:30:00.000Z')).toBe('2025-01-01T07:30');
    expect(formatShanghai('2025-06-01T12:00:05.000Z')).toBe('2025-06-01 20:00:05');
  });

  it.each(['2025-02-30T10:00', '2025-06-01 20:00', '2025-06-01T24:00', ''])('malformed %j → null', (bad) => expect(shanghaiLocalToIso(bad)).toBeNull());
});
