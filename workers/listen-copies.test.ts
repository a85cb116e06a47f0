/**
 * More than one accept per turn (workers/listen-copies.ts), with real processes and a real flood:
 * a web-like process whose every turn takes ~2 ms (e2e/support/busy-acceptor.ts) takes in about one
 * connection per turn by itself (libuv's one accept per listening handle per turn), and the whole
 * flood with 15 copies of its handle. Then the real web server accepting for itself with copies
 * serves and stops cleanly.
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { spawnWebServer } from '@/e2e/support/web-server';

const FLOOD = 3000;

/** Starts the busy acceptor, floods it with FLOOD connections from this process, returns how many it took in 2.5 s. */
async function acceptedBy(copies: number): Promise<number> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'e2e/support/busy-acceptor.ts'], { env: { ...process.env, COPIES: String(copies), WINDOW_MS: '2500' }, stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    let out = '';
    const line = async (key: string): Promise<number> => {
      for (;;) {
        const m = new RegExp(`\\{"${key}":(\\d+)\\}`).exec(out);
        if (m) return Number(m[1]);
        if (proc.exitCode !== null) throw new Error(`the acceptor exited (${proc.exitCode}): ${out}`);
        await new Promise((r) => proc.stdout!.once('data', (d: Buffer) => r((out += d.toString()))));
      }
    };
    const port = await line('ready');
    proc.stdin!.write('go\n');
    const sockets: net.Socket[] = [];
    for (let i = 0; i < FLOOD; i++) {
      const s = net.connect(port, '127.0.0.1');
      s.on('error', () => {});
      sockets.push(s);
      if (i % 500 === 499) await new Promise((r) => setImmediate(r));
    }
    const accepted = await line('accepted');
    sockets.forEach((s) => s.destroy());
    return accepted;
  } finally {
    proc.kill('SIGKILL');
  }
}

describe('more than one accept per turn', () => {
  it('a process with 2 ms turns takes in about one connection per turn alone, and the whole flood with 15 copies of its handle', { timeout: 60_000 }, async () => {
    const alone = await acceptedBy(0);
    const copied = await acceptedBy(15);
    // 2.5 s of 2 ms turns is at most ~1 250 turns: alone it cannot take the 3 000 in.
    expect(alone).toBeLessThan(1500);
    expect(copied).toBe(FLOOD);
  });

  it('the web server accepting for itself with copies serves, and stops on SIGTERM with exit 0', { timeout: 60_000 }, async () => {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const { web, output, exited } = spawnWebServer({ PORT: String(port), HOST: '127.0.0.1', WEB_CONCURRENCY: '1', WEB_PART: 'hot', NODE_CLUSTER_SCHED_POLICY: 'none', WEB_ACCEPTS_PER_TURN: '16', LOG_LEVEL: 'info' });
    try {
      for (let t = Date.now(); !output().includes('web server ready'); ) {
        if (Date.now() - t > 45_000) throw new Error(output().slice(-2000));
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(output()).toContain('accepting for itself');
      // Enough connections at once that the copies take some of them in.
      const answers = await Promise.all(Array.from({ length: 200 }, () => fetch(`http://127.0.0.1:${port}/api/health`, { headers: { connection: 'close' } }).then((r) => r.status)));
      expect(answers.every((s) => s === 200)).toBe(true);
      process.kill(-web.pid!, 'SIGTERM');
      expect(await exited, output().slice(-2000)).toBe(0);
    } finally {
      if (web.exitCode === null) process.kill(-web.pid!, 'SIGKILL');
    }
  });
});
