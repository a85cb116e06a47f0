/**
 * Who is on the other end of a request. Route handlers only see a web Request, which carries no
 * socket; the project's own HTTP server (the hot server in front of Next) therefore writes the
 * socket's address into PEER_HEADER on every request, replacing anything a client sent under that
 * name. Forwarded headers (X-Forwarded-For) are the client's word and are believed only as far as
 * TRUSTED_PROXIES allows:
 *
 *   (empty)            trust nobody: the client is the socket's peer (the default)
 *   2                  a hop count: exactly 2 proxies of ours stand in front, so the client is the
 *                      2nd X-Forwarded-For entry counted from the right (the nearest proxy appends
 *                      the address it saw last; entries further left are whatever the client sent)
 *   10.0.0.0/8,::1     CIDRs: only a peer inside them may forward; walking X-Forwarded-For from the
 *                      right, the first address outside them is the client
 *
 * Without a peer address (a plain `next start`, which cannot set PEER_HEADER) every request lands
 * in one shared bucket rather than believing a header anyone can write.
 */
import { BlockList, isIP } from 'node:net';
import { env } from '@/lib/env';

export const PEER_HEADER = 'x-hmdp-peer';
/** The address used when the real one is unknown: one shared rate-limit bucket, never a fresh key. */
export const UNKNOWN_CLIENT = 'unknown';

export type TrustedProxies = { hops: number } | { cidrs: BlockList } | null;

export function parseTrustedProxies(raw: string): TrustedProxies {
  const s = raw.trim();
  if (s === '') return null;
  if (/^\d+$/.test(s)) return Number(s) > 0 ? { hops: Number(s) } : null;
  const cidrs = new BlockList();
  for (const part of s.split(',').map((p) => p.trim()).filter(Boolean)) {
    const [addr, bits] = part.split('/');
    const a = normalizeIp(addr ?? '');
    if (!a) throw new Error(`TRUSTED_PROXIES: "${part}" is not an address or CIDR`);
    const family = isIP(a) === 6 ? 'ipv6' : 'ipv4';
    const prefix = bits === undefined ? (family === 'ipv6' ? 128 : 32) : Number(bits);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 'ipv6' ? 128 : 32)) throw new Error(`TRUSTED_PROXIES: bad prefix in "${part}"`);
    cidrs.addSubnet(a, prefix, family);
  }
  return { cidrs };
}

/** A syntactically valid IP (IPv4-mapped IPv6 unwrapped, brackets/zone dropped), else null. */
export function normalizeIp(raw: string): string | null {
  let s = raw.trim();
  if (s.startsWith('[') && s.includes(']')) s = s.slice(1, s.indexOf(']'));
  s = s.replace(/%.*$/, '');
  if (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(s)) s = s.slice(7);
  return s.length <= 45 && isIP(s) ? s.toLowerCase() : null;
}

const configured = parseTrustedProxies(env.TRUSTED_PROXIES);

export function clientIp(headers: Headers, trusted: TrustedProxies = configured): string {
  const peer = normalizeIp(headers.get(PEER_HEADER) ?? '');
  if (!peer) return UNKNOWN_CLIENT;
  if (!trusted) return bucket(peer);
  const chain = (headers.get('x-forwarded-for') ?? '').split(',').map((e) => e.trim()).filter(Boolean);
  if ('hops' in trusted) {
    // Fewer entries than proxies means the request skipped one of them: believe only the socket.
    const entry = chain.length >= trusted.hops ? chain[chain.length - trusted.hops] : undefined;
    const ip = entry ? normalizeIp(entry) : null;
    return ip ? bucket(ip) : bucket(peer);
  }
  let client = peer;
  for (let i = chain.length - 1; i >= 0 && isTrusted(trusted.cidrs, client); i--) {
    const ip = normalizeIp(chain[i]!);
    if (!ip) break; // garbage in the chain: stop at the last address we could vouch for
    client = ip;
  }
  return bucket(client);
}

/**
 * Whether this request came through a proxy of ours (TRUSTED_PROXIES), so that its forwarded
 * headers (X-Forwarded-Host too) were written by it and not by the client.
 */
export function viaTrustedProxy(headers: Headers, trusted: TrustedProxies = configured): boolean {
  if (!trusted) return false;
  if ('hops' in trusted) return true;
  const peer = normalizeIp(headers.get(PEER_HEADER) ?? '');
  return peer !== null && isTrusted(trusted.cidrs, peer);
}

/**
 * The key a socket's peer is counted under for the per-client connection cap (lib/hot/server.ts):
 * the rate-limit bucket (an IPv6 /64, an IPv4 address), or null for a peer not to count — a trusted
 * proxy (every connection through it comes from its address; with a hop count, every peer is one),
 * or no address at all.
 */
export function connectionBucket(remoteAddress: string | undefined, trusted: TrustedProxies = configured): string | null {
  if (trusted && 'hops' in trusted) return null;
  const peer = normalizeIp(remoteAddress ?? '');
  if (!peer || (trusted && isTrusted(trusted.cidrs, peer))) return null;
  return bucket(peer);
}

function isTrusted(list: BlockList, ip: string): boolean {
  return list.check(ip, isIP(ip) === 6 ? 'ipv6' : 'ipv4');
}

/**
 * One rate-limit bucket per IPv4 address but per IPv6 /64: a single subscriber usually holds a
 * whole /64, so counting single IPv6 addresses would hand an attacker 2^64 fresh buckets.
 */
function bucket(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  return expandIpv6(ip).slice(0, 4).join(':') + '::/64';
}

function expandIpv6(ip: string): string[] {
  let s = ip;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const o = v4[1]!.split('.').map(Number);
    s = s.slice(0, -v4[1]!.length) + (((o[0]! << 8) | o[1]!).toString(16)) + ':' + (((o[2]! << 8) | o[3]!).toString(16));
  }
  const [head, tail] = s.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => (parseInt(g, 16) || 0).toString(16));
}
