/**
 * node:http ⇄ the route core (lib/http/route.ts). A hot request becomes the same web Request the
 * App Router would build, so the handler, its auth, CSRF rule, body parsing and errors are the
 * route file's own; the answer is written to the socket without building a web Response (a
 * Response + its text cost about twice the Request, measured in the README).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_BODY_BYTES } from '@/lib/http/parse';
import type { Reply } from '@/lib/http/respond';

/**
 * The body, read up to one byte past the parser's cap: a bigger body still reaches the handler
 * as "too large" (the same 413 as through Next) without this process buffering all of it; node
 * discards the unread rest once the answer is sent.
 */
export function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const declared = req.headers['content-length'];
  if ((declared === undefined || declared === '0') && req.headers['transfer-encoding'] === undefined) {
    return Promise.resolve(null);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      req.off('data', onData);
      resolve(size === 0 ? null : Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > MAX_BODY_BYTES) finish();
    };
    req.on('data', onData);
    req.once('end', finish);
    req.once('error', (err) => {
      if (!done) reject(err);
    });
  });
}

export function toWebRequest(req: IncomingMessage, body: Buffer | null): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  // The origin is a placeholder: handlers read the path and query from the URL, and the CSRF rule
  // reads the Host and Origin headers, never the URL's host.
  return new Request(`http://hot.local${req.url ?? '/'}`, {
    method: req.method,
    headers,
    body: body && req.method !== 'GET' && req.method !== 'HEAD' ? new Uint8Array(body) : null,
  });
}

export function writeReply(res: ServerResponse, reply: Reply): void {
  const text = JSON.stringify(reply.body);
  res.statusCode = reply.status;
  res.setHeader('content-type', 'application/json');
  res.setHeader('content-length', Buffer.byteLength(text));
  if (reply.headers) for (const [k, v] of Object.entries(reply.headers)) res.setHeader(k, v);
  res.end(text);
}

/** A Response a handler built itself (rare on hot routes): headers, then the body streamed. */
export async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  const cookies = response.headers.getSetCookie();
  response.headers.forEach((v, k) => {
    if (k !== 'set-cookie') res.setHeader(k, v);
  });
  if (cookies.length) res.setHeader('set-cookie', cookies);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!res.write(value)) await new Promise((r) => res.once('drain', r));
  }
  res.end();
}
