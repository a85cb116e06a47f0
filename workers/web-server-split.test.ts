/**
 * The split web server (WEB_PART=split, docs/hot-server.md#the-split-server) as `npm start` runs it,
 * on the build the test step makes first: one port; pages and every other non-hot path answered by
 * Next in a process of its own, reached over a unix socket in a private directory; the hot routes
 * by the web process. Next's process killed: it is started again and the hot routes never stop.
 * SIGTERM: every process exits and the socket's directory is gone.
 */
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnWebServer } from '@/e2e/support/web-server';

const splitEnv = (port: number) => ({ NODE_ENV: 'production', ALLOW_DEV_SMS_IN_PRODUCTION: 'true', PORT: String(port), HOST: '127.0.0.1', WEB_CONCURRENCY: '1', WEB_PART: 'split', LOG_LEVEL: 'info' });

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

const children = (pid: number): number[] => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
};
const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
};
const socketDirs = () => new Set(readdirSync(tmpdir()).filter((f) => f.startsWith('hmdp-next-')));

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('the split web server', () => {
  it('serves pages from Next in its own process and the hot routes itself, restarts Next, stops whole', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const dirsBefore = socketDirs();
    // The process accepting for itself, as one does over a deep kernel queue (workers/accept-policy.ts); the other tests here take the host's default.
    const { web, output, exited } = spawnWebServer({ ...splitEnv(port), NODE_CLUSTER_SCHED_POLICY: 'none' });
    try {
      await until('the ready line', async () => (output().includes('web server ready') ? true : undefined), 90_000).catch((e: Error) => {
        throw new Error(`${e.message}\n${output().slice(-3000)}`);
      });
      expect(output()).toContain(`web server ready on ${origin} (1 process + Next in its own; accepting for itself)`);

      // The processes: the web process (node:cluster) and Next's (workers/next-server.ts).
      const kids = children(web.pid!);
      const nextPid = kids.find((p) => cmdline(p).includes('workers/next-server.ts'));
      expect(nextPid, kids.map(cmdline).join('\n')).toBeDefined();
      expect(kids.filter((p) => p !== nextPid)).toHaveLength(1);
      const newDirs = [...socketDirs()].filter((d) => !dirsBefore.has(d));
      expect(newDirs).toHaveLength(1);
      const dir = path.join(tmpdir(), newDirs[0]!);

      // A page and a Next API route, through the web process to Next.
      const page = await fetch(`${origin}/login`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toContain('text/html');
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(await page.text()).toContain('手机号登录');
      expect((await fetch(`${origin}/api/health`)).status).toBe(200);
      // A hot route, answered by the web process itself.
      const hot = await fetch(`${origin}/api/shops/987654321987/vouchers`);
      expect(hot.status).toBe(404);
      expect(((await hot.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');

      // Next's process killed: the hot routes go on, pages come back once another has started.
      process.kill(nextPid!, 'SIGKILL');
      expect((await fetch(`${origin}/api/shops/987654321987/vouchers`)).status).toBe(404);
      await until('pages again', async () => ((await fetch(`${origin}/login`)).status === 200 ? true : undefined));
      expect(output()).toContain("Next's process died; starting another");
      const again = children(web.pid!).find((p) => cmdline(p).includes('workers/next-server.ts'));
      expect(again).toBeDefined();
      expect(again).not.toBe(nextPid);

      const last = children(web.pid!);
      expect(last).toHaveLength(2);
      // A Ctrl-C reaches the whole group at once (SIGINT to every process). A request the web
      // process is still reading when it comes (its headers half sent) must still reach Next and
      // get its answer: Next's process waits until the web processes drained and the primary lets
      // go of it (it used to stop at the signal, and the request was answered 502).
      const body = '{"phone":"not-a-phone"}';
      const slow = net.connect(port, '127.0.0.1');
      const answered = new Promise<string>((r) => {
        let got = '';
        slow.on('data', (c: Buffer) => (got += c.toString()));
        slow.on('close', () => r(got));
      });
      slow.write(`POST /api/user/code HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
      await new Promise((r) => setTimeout(r, 300));
      process.kill(-web.pid!, 'SIGINT');
      await new Promise((r) => setTimeout(r, 700));
      const alive = (p: number) => existsSync(`/proc/${p}`) && !readFileSync(`/proc/${p}/stat`, 'utf8').includes(') Z ');
      expect(alive(again!), "Next's process stopped while a web process was still reading a request").toBe(true);
      slow.write(`Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
      const reply = await answered;
      expect(reply).toMatch(/^HTTP\/1\.1 400 /);
      expect(reply).toContain('"VALIDATION');
      expect(await Promise.race([exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 20_000))])).toBe(0);
      expect(existsSync(dir)).toBe(false);
      // Every child gone with it, Next's process too (its exit was awaited: no orphan left serving the socket).
      expect(last.filter(alive)).toEqual([]);
    } finally {
      if (web.exitCode === null) process.kill(-web.pid!, 'SIGKILL');
    }
  });

  it("Next's socket directory: made again when gone; a primary killed outright takes Next, the web process and the directory with it", { timeout: 120_000 }, async () => {
    const port = await freePort();
    const dirsBefore = socketDirs();
    const { web, output } = spawnWebServer(splitEnv(port));
    try {
      await until('the ready line', async () => (output().includes('web server ready') ? true : undefined), 90_000).catch((e: Error) => {
        throw new Error(`${e.message}\n${output().slice(-3000)}`);
      });
      const newDirs = [...socketDirs()].filter((d) => !dirsBefore.has(d));
      expect(newDirs).toHaveLength(1);
      const dir = path.join(tmpdir(), newDirs[0]!);
      // The directory gone (a cleaner of /tmp) and Next dead: the next copy gets it made again, 0700.
      const firstNext = children(web.pid!).find((p) => cmdline(p).includes('workers/next-server.ts'))!;
      rmSync(dir, { recursive: true, force: true });
      process.kill(firstNext, 'SIGKILL');
      await until('pages again', async () => ((await fetch(`http://127.0.0.1:${port}/login`)).status === 200 ? true : undefined));
      expect(statSync(dir).mode & 0o777).toBe(0o700);

      const kids = children(web.pid!);
      expect(kids).toHaveLength(2);
      process.kill(web.pid!, 'SIGKILL');
      const alive = (p: number) => existsSync(`/proc/${p}`) && !readFileSync(`/proc/${p}/stat`, 'utf8').includes(') Z ');
      await until('every child gone', async () => (kids.some(alive) ? undefined : true), 15_000);
      expect(existsSync(dir)).toBe(false);
    } finally {
      try {
        process.kill(-web.pid!, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    }
  });

  it("a socket directory others may enter is never listened in: the server stops, saying why", { timeout: 120_000 }, async () => {
    const port = await freePort();
    const dirsBefore = socketDirs();
    const { web, output, exited } = spawnWebServer(splitEnv(port));
    try {
      await until('the ready line', async () => (output().includes('web server ready') ? true : undefined), 90_000).catch((e: Error) => {
        throw new Error(`${e.message}\n${output().slice(-3000)}`);
      });
      const dir = path.join(tmpdir(), [...socketDirs()].find((d) => !dirsBefore.has(d))!);
      chmodSync(dir, 0o755);
      process.kill(children(web.pid!).find((p) => cmdline(p).includes('workers/next-server.ts'))!, 'SIGKILL');
      expect(await Promise.race([exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 20_000))]), output().slice(-2000)).toBe(1);
      expect(output()).toContain("Next's socket directory is open to other users; stopping");
      expect(existsSync(dir)).toBe(false);
    } finally {
      if (web.exitCode === null) process.kill(-web.pid!, 'SIGKILL');
    }
  });
});
