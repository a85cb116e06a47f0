/**
 * Next answers some API requests itself, with no route code of ours in between: 405 to a method
 * the route file does not export, 204 to OPTIONS, its 404 to a path no route file serves. Those
 * carry the API's security headers like every route answer (workers/web-server.ts sets them before
 * Next runs), and an ordinary route answer still sends each header exactly once. Checked on the
 * real web server (workers/web-server.ts, after `npx next build`) over raw sockets, so a header
 * line sent twice is seen.
 */
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebServer, stopWebServer } from '@/e2e/support/web-server';
import { apiSecurityHeaders } from '@/lib/http/security-headers';

// Beside E2E_PORT, which e2e/hostile/refused-body.test.ts's web server takes: a server of the file
// before may still be closing when this one starts, and its health answer would pass for this one's.
const port = Number(process.env.E2E_PORT ?? 3201) + 17;
let web: ChildProcess | undefined;

afterAll(() => {
  stopWebServer(web);
});

/** One request on its own connection (Connection: close); the status and every header line, names lower-cased, in order. */
function raw(method: string, path: string, extra = ''): Promise<{ status: number; lines: [string, string][] }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let buf = '';
    socket.setEncoding('latin1');
    socket.on('data', (c: string) => (buf += c));
    socket.on('error', reject);
    socket.on('close', () => {
      const head = buf.slice(0, buf.indexOf('\r\n\r\n')).split('\r\n');
      const lines = head.slice(1).map((l): [string, string] => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]);
      resolve({ status: Number(head[0]!.split(' ')[1]), lines });
    });
    socket.write(`${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-length: 0\r\nconnection: close\r\n${extra}\r\n`);
  });
}

/** Every API security header present exactly once, with the value lib/http/security-headers.ts gives. */
function expectApiHeadersOnce(lines: [string, string][], https: boolean, what: string): void {
  for (const [name, value] of Object.entries(apiSecurityHeaders({ https }))) {
    const found = lines.filter(([n]) => n === name.toLowerCase()).map(([, v]) => v);
    expect(found, `${what}: ${name}`).toEqual([value]);
  }
  if (!https) expect(lines.some(([n]) => n === 'strict-transport-security'), `${what}: no HSTS over plain HTTP`).toBe(false);
}

describe.skipIf(!existsSync('.next/BUILD_ID'))("Next's own answers under /api carry the API's security headers (the real web server)", () => {
  beforeAll(async () => {
    web = await startWebServer(port);
  }, 120_000);

  it('405 to a method the route file does not export (DELETE /api/health, POST /api/shops/1, PATCH on the grab)', async () => {
    for (const [method, path] of [
      ['DELETE', '/api/health'],
      ['POST', '/api/shops/1'],
      ['PATCH', '/api/seckill/1'],
    ] as const) {
      const a = await raw(method, path);
      expect(a.status, `${method} ${path}`).toBe(405);
      expectApiHeadersOnce(a.lines, false, `${method} ${path}`);
    }
  });

  it("204 to OPTIONS (Next's automatic answer, with its Allow)", async () => {
    const a = await raw('OPTIONS', '/api/shops/1');
    expect(a.status).toBe(204);
    expect(a.lines.find(([n]) => n === 'allow')?.[1]).toContain('GET');
    expectApiHeadersOnce(a.lines, false, 'OPTIONS /api/shops/1');
  });

  it('404 to an /api path no route file serves', async () => {
    for (const path of ['/api/no-such-thing', '/api/shops/1/no/such/thing']) {
      const a = await raw('GET', path);
      expect(a.status, path).toBe(404);
      expectApiHeadersOnce(a.lines, false, path);
    }
  });

  it("ordinary route answers (200, a route's 404, an image route's own nosniff) send each header once; HSTS once behind HTTPS", async () => {
    for (const path of ['/api/health', '/api/shop-types', '/api/shops/999999999', '/api/uploads/nope.webp']) {
      const a = await raw('GET', path);
      expect([200, 404], path).toContain(a.status);
      expectApiHeadersOnce(a.lines, false, path);
      const s = await raw('GET', path, 'x-forwarded-proto: https\r\n');
      expectApiHeadersOnce(s.lines, true, `${path} over https`);
    }
    const s = await raw('DELETE', '/api/health', 'x-forwarded-proto: https\r\n');
    expectApiHeadersOnce(s.lines, true, 'DELETE /api/health over https');
  });
});
