/**
 * A client that goes away in the middle of an upload is the client's doing: the route answers
 * without a 5xx and logs it as an aborted request (info), never as "dependency unavailable"
 * (error). The abort is real: a socket sends the headers and part of the body, then closes, and a
 * node HTTP server hands the request to the route the way Next's node adapter does (the node
 * request as the body, a signal that aborts when the response closes unfinished).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { closeDb } from '@/lib/db/client';
import { closeRedis } from '@/lib/redis/client';
import { log } from '@/lib/log';
import { loginNewUser } from '@/e2e/support/helpers';
import * as upload from '@/app/api/uploads/route';

afterAll(async () => {
  await closeDb();
  await closeRedis();
});
afterEach(() => vi.restoreAllMocks());

function toWebRequest(req: IncomingMessage, res: ServerResponse): Request {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new Error('response closed'));
  });
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
  return new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body: req as unknown as ReadableStream, duplex: 'half', signal: controller.signal } as RequestInit);
}

describe('an upload the client aborts', () => {
  it('is answered without a 5xx and logged as a client abort, not as a dependency failure', async () => {
    const { token } = await loginNewUser();
    const errors = vi.spyOn(log, 'error');
    const infos = vi.spyOn(log, 'info');
    let answered!: (status: number) => void;
    const status = new Promise<number>((r) => (answered = r));
    const server = createServer((req, res) => {
      void (async () => {
        const out = await upload.POST(toWebRequest(req, res), { params: Promise.resolve({}) });
        answered(out.status);
        if (!res.destroyed) res.writeHead(out.status).end(await out.text());
      })();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const sock = connect(port, '127.0.0.1');
      await new Promise<void>((r) => sock.once('connect', r));
      sock.write(
        `POST /api/uploads HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: image/jpeg\r\nContent-Length: 400000\r\n\r\n`,
      );
      sock.write(Buffer.alloc(8192, 0xff));
      await new Promise((r) => setTimeout(r, 200)); // the route is reading the body by now
      sock.destroy();
      const got = await Promise.race([status, new Promise<number>((r) => setTimeout(() => r(-1), 10_000))]);
      expect(got).toBeGreaterThanOrEqual(400);
      expect(got).toBeLessThan(500);
      const messages = errors.mock.calls.map((c) => String(c[1] ?? c[0]));
      expect(messages).not.toContain('dependency unavailable');
      expect(messages).not.toContain('unhandled error');
      expect(infos.mock.calls.map((c) => String(c[1] ?? c[0]))).toContain('client aborted the request');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
