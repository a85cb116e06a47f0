import { describe, expect, it } from 'vitest';
import { parseMonitorLine } from '@/e2e/support/redis-monitor';

describe('parseMonitorLine', () => {
  it('reads the database, the source and the arguments', () => {
    expect(parseMonitorLine('+1764290000.123456 [10 lua] "sadd" "seckill:{7}:buyers" "42"')).toEqual({ db: 10, source: 'lua', args: ['sadd', 'seckill:{7}:buyers', '42'] });
    expect(parseMonitorLine('+1764290000.123456 [0 127.0.0.1:50712] "evalsha" "abc" "1" "k"')).toEqual({ db: 0, source: '127.0.0.1:50712', args: ['evalsha', 'abc', '1', 'k'] });
    expect(parseMonitorLine('+1764290000.123456 [2 [::1]:50712] "get" "k"')).toEqual({ db: 2, source: '[::1]:50712', args: ['get', 'k'] });
    expect(parseMonitorLine('+1764290000.123456 [2 unix:/run/redis.sock] "ping"')).toEqual({ db: 2, source: 'unix:/run/redis.sock', args: ['ping'] });
  });

  it('unquotes what Redis escapes, and bytes as UTF-8', () => {
    // "a\"b\\c\n" and 已 (e5 b7 b2) as Redis prints them.
    const c = parseMonitorLine('+1.5 [3 lua] "set" "a\\"b\\\\c\\n" "\\xe5\\xb7\\xb2"');
    expect(c?.args).toEqual(['set', 'a"b\\c\n', '已']);
  });

  it('is null for anything that is not a monitored command', () => {
    expect(parseMonitorLine('+OK')).toBeNull();
    expect(parseMonitorLine('-ERR unknown')).toBeNull();
    expect(parseMonitorLine('+1.5 [3 lua] "unterminated')).toBeNull();
  });
});
