/**
 * Who is on the other end of a request. Route handlers only see a web Request, which carries no
 * socket; the project's own HTTP server (the hot server in front of Next) therefore writes the
 * socket's address into PEER_HEADER on every request, replacing anything a client sent under that
 * name. Forwarded headers (X-Forwarded-For) are the client's word and are believed only as far as
 * the trusted-proxy setting allows.
 */
export const PEER_HEADER = 'x-hmdp-peer';

export function clientIp(headers: Headers): string {
  const xff = headers.get('x-forwarded-for');
  const first = xff?.split(',')[0]?.trim();
  return first || headers.get('x-real-ip') || headers.get(PEER_HEADER) || '127.0.0.1';
}
