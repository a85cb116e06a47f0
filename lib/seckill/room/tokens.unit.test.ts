import { describe, expect, it } from 'vitest';
import { grabTokenNonce, issueGrabToken, signTicket, SPEND_NOW_NONCE, verifyTicket } from '@/lib/seckill/room/tokens';

describe('room tickets and grab tokens', () => {
  const now = 1_800_000_000_000;

  it('a ticket verifies for its user and sale until it expires, and nowhere else', () => {
    const t = signTicket({ voucherId: '7', userId: '42', position: 3, expiresAt: now + 1000 });
    expect(verifyTicket(t, '7', '42', now)).toEqual({ voucherId: '7', userId: '42', position: 3, expiresAt: now + 1000 });
    expect(verifyTicket(t, '7', '43', now)).toBeNull();
    expect(verifyTicket(t, '8', '42', now)).toBeNull();
    expect(verifyTicket(t, '7', '42', now + 1000)).toBeNull();
    // A changed position (a better place) breaks the signature.
    expect(verifyTicket(t.replace('.3.', '.1.'), '7', '42', now)).toBeNull();
  });

  it('a grab token gives its nonce to its user and sale until it expires; forged, altered or a ticket passed as a token give nothing', () => {
    const g = issueGrabToken('7', '42', 60_000, now, '0123456789abcdef');
    expect(grabTokenNonce(g.token, '7', '42', now)).toBe(g.nonce);
    expect(g.nonce).toMatch(/^0123456789abcdef\.[A-Za-z0-9_-]{16}$/);
    expect(grabTokenNonce(g.token, '7', '42', now + 60_000)).toBeNull();
    expect(grabTokenNonce(g.token, '7', '41', now)).toBeNull();
    expect(grabTokenNonce(g.token, '6', '42', now)).toBeNull();
    const parts = g.token.split('.');
    parts[5] = String(now + 10 * 60_000); // a longer life
    expect(grabTokenNonce(parts.join('.'), '7', '42', now)).toBeNull();
    const other = g.token.split('.');
    other[3] = 'fedcba9876543210'; // the epoch of the sale's copy after a Redis loss
    expect(grabTokenNonce(other.join('.'), '7', '42', now)).toBeNull();
    const ticket = signTicket({ voucherId: '7', userId: '42', position: 3, expiresAt: now + 1000 });
    expect(grabTokenNonce(ticket.replace(/^t1/, 'g2'), '7', '42', now)).toBeNull();
    expect(grabTokenNonce('', '7', '42', now)).toBeNull();
    expect(grabTokenNonce('g1.7.42.x.1.y'.repeat(50), '7', '42', now)).toBeNull();
    expect(issueGrabToken('7', '42', 60_000, now).nonce).not.toBe(g.nonce);
  });

  it("the room's own spend-now nonce (epoch '*', which the grab script spends without a record) never comes out of a token, even one we signed", () => {
    // Signed with our own key, as a bug minting one would: the route still refuses its nonce.
    const g = issueGrabToken('7', '42', 60_000, now, SPEND_NOW_NONCE);
    expect(g.nonce.startsWith('*.')).toBe(true);
    expect(grabTokenNonce(g.token, '7', '42', now)).toBeNull();
  });
});
