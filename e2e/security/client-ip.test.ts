/**
 * The client address behind every per-IP limit (proof suite): X-Forwarded-For is the client's own
 * word and moves nothing unless TRUSTED_PROXIES says so; the SMS per-IP cap holds against a fresh
 * forwarded value on every request. Requests carry the peer header exactly as the project's server
 * writes it from the socket.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { closeDb } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { env } from '@/lib/env';
import { clientIp, parseTrustedProxies, PEER_HEADER, UNKNOWN_CLIENT, viaTrustedProxy } from '@/lib/http/client-ip';
import { resetLimit } from '@/lib/rate-limit';
import { callRoute, randomPhone } from '@/e2e/support/helpers';
import { POST as sendCode } from '@/app/api/user/code/route';

afterAll(async () => {
  await closeDb();
  await closeRedis();
});

const h = (o: Record<string, string>) => new Headers(o);

describe('clientIp', () => {
  it('is the socket peer whatever X-Forwarded-For / X-Real-IP say, when no proxy is trusted', () => {
    for (const spoof of ['1.2.3.4', '1.2.3.4, 5.6.7.8', 'garbage', '::1', '']) {
      expect(clientIp(h({ [PEER_HEADER]: '203.0.113.9', 'x-forwarded-for': spoof, 'x-real-ip': '9.9.9.9' }), null)).toBe('203.0.113.9');
    }
  });

  it('without a peer address is one shared bucket, never a forwarded value', () => {
    expect(clientIp(h({ 'x-forwarded-for': '1.2.3.4' }), null)).toBe(UNKNOWN_CLIENT);
    expect(clientIp(h({ 'x-forwarded-for': '1.2.3.4' }), parseTrustedProxies('1'))).toBe(UNKNOWN_CLIENT);
    expect(clientIp(h({ [PEER_HEADER]: 'not-an-ip', 'x-forwarded-for': '1.2.3.4' }), null)).toBe(UNKNOWN_CLIENT);
  });

  it('a hop count believes exactly that entry from the right', () => {
    const one = parseTrustedProxies('1');
    expect(clientIp(h({ [PEER_HEADER]: '10.0.0.2', 'x-forwarded-for': 'spoofed, 198.51.100.7' }), one)).toBe('198.51.100.7');
    const two = parseTrustedProxies('2');
    expect(clientIp(h({ [PEER_HEADER]: '10.0.0.2', 'x-forwarded-for': '6.6.6.6, 198.51.100.7, 10.0.0.1' }), two)).toBe('198.51.100.7');
    // Fewer entries than proxies: someone skipped a proxy, so only the socket counts.
    expect(clientIp(h({ [PEER_HEADER]: '10.0.0.2', 'x-forwarded-for': '198.51.100.7' }), two)).toBe('10.0.0.2');
  });

  it('CIDRs: only a trusted peer may forward, and trusted hops are skipped from the right', () => {
    const t = parseTrustedProxies('10.0.0.0/8, ::1');
    expect(clientIp(h({ [PEER_HEADER]: '10.1.2.3', 'x-forwarded-for': '6.6.6.6, 198.51.100.7, 10.9.9.9' }), t)).toBe('198.51.100.7');
    expect(clientIp(h({ [PEER_HEADER]: '203.0.113.5', 'x-forwarded-for': '198.51.100.7' }), t)).toBe('203.0.113.5');
    expect(clientIp(h({ [PEER_HEADER]: '::1', 'x-forwarded-for': 'junk' }), t)).toBe('0:0:0:0::/64');
    expect(() => parseTrustedProxies('10.0.0.0/99')).toThrow(/TRUSTED_PROXIES/);
  });

  it('a request came through a proxy of ours only when one is trusted and, with CIDRs, the peer is inside them', () => {
    expect(viaTrustedProxy(h({ [PEER_HEADER]: '10.0.0.5', 'x-forwarded-host': 'evil.example' }), null)).toBe(false);
    expect(viaTrustedProxy(h({ [PEER_HEADER]: '10.0.0.5' }), parseTrustedProxies('1'))).toBe(true);
    const cidrs = parseTrustedProxies('10.0.0.0/8');
    expect(viaTrustedProxy(h({ [PEER_HEADER]: '10.0.0.5' }), cidrs)).toBe(true);
    expect(viaTrustedProxy(h({ [PEER_HEADER]: '203.0.113.9' }), cidrs)).toBe(false);
    expect(viaTrustedProxy(h({}), cidrs)).toBe(false);
  });

  it('IPv6 clients share a bucket per /64; IPv4-mapped addresses are plain IPv4', () => {
    const a = clientIp(h({ [PEER_HEADER]: '2001:db8:1:2::aaaa' }), null);
    const b = clientIp(h({ [PEER_HEADER]: '2001:db8:1:2:ffff:1:2:3' }), null);
    expect(a).toBe(b);
    expect(a).toBe('2001:db8:1:2::/64');
    expect(clientIp(h({ [PEER_HEADER]: '::ffff:127.0.0.5' }), null)).toBe('127.0.0.5');
  });
});

describe('SMS per-IP cap against a rotating X-Forwarded-For', () => {
  it('one client sending a new forwarded address each time is still one client', async () => {
    expect(env.RATE_LIMITS, 'this proof needs the limits on').toBe(true);
    const peer = '198.51.100.77';
    await resetLimit('smsIpHourly', peer);
    const statuses: number[] = [];
    for (let i = 0; i < env.SMS_IP_HOURLY_MAX + 3; i++) {
      const r = await callRoute(sendCode, { body: { phone: randomPhone() }, headers: { [PEER_HEADER]: peer, 'x-forwarded-for': `100.64.${i >> 8}.${i & 255}` } });
      statuses.push(r.status);
    }
    expect(statuses.slice(0, env.SMS_IP_HOURLY_MAX).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(env.SMS_IP_HOURLY_MAX)).toEqual([429, 429, 429]);
    // and no rate-limit key was made for any forwarded value
    expect(await redis.keys('rl:smsIpHourly:100.64.*')).toEqual([]);
    await resetLimit('smsIpHourly', peer);
  });
});
