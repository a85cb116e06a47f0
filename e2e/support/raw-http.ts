/**
 * Raw HTTP/1.1 answers read off a socket's text, for tests that talk to a server over plain TCP
 * (answers framed by Content-Length; none of the servers under test chunk them).
 */

/** The first whole answer in `buf` (head, body, and the text after it), or null while it is not all there. */
export function takeAnswer(buf: string): { head: string; body: string; rest: string } | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const head = buf.slice(0, end);
  const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
  if (buf.length < end + 4 + length) return null;
  return { head, body: buf.slice(end + 4, end + 4 + length), rest: buf.slice(end + 4 + length) };
}
