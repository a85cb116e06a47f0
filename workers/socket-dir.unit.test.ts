/**
 * The split server's socket directories (workers/socket-dir.ts): only this user's old `hmdp-next-*`
 * directories whose socket nobody listens on are swept; a live server's, a young one, one holding
 * anything else and other names are left alone. A directory others may enter is refused.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { socketDirProblem, sweepStaleSocketDirs } from './socket-dir';

const root = mkdtempSync(path.join(tmpdir(), 'socket-dir-test-'));
const live = net.createServer();
afterAll(async () => {
  await new Promise((r) => live.close(r));
  rmSync(root, { recursive: true, force: true });
});

const HOUR = 3_600_000;
function dir(name: string, ageMs: number, files: Record<string, string> = {}): string {
  const d = path.join(root, name);
  mkdirSync(d, { mode: 0o700 });
  for (const [f, body] of Object.entries(files)) writeFileSync(path.join(d, f), body);
  const t = (Date.now() - ageMs) / 1000;
  utimesSync(d, t, t);
  return d;
}

describe("the split server's socket directories", () => {
  it('sweeps only old ones of this user whose socket nobody listens on', async () => {
    // A socket left by a Next that was killed: bound and then its server gone without unlinking.
    const deadSock = path.join(root, 'dead.sock');
    const dead = net.createServer();
    await new Promise<void>((r) => dead.listen(deadSock, r));
    const stale = dir('hmdp-next-stale', HOUR);
    // node unlinks a unix socket on close: move it first, so what stays is a socket nobody answers.
    renameSync(deadSock, path.join(stale, 'next.sock'));
    await new Promise((r) => dead.close(r));
    const t = (Date.now() - HOUR) / 1000;
    utimesSync(stale, t, t);
    const empty = dir('hmdp-next-empty', HOUR);
    const running = dir('hmdp-next-running', HOUR);
    await new Promise<void>((r) => live.listen(path.join(running, 'next.sock'), r));
    utimesSync(running, t, t);
    const young = dir('hmdp-next-young', 60_000, { 'next.sock': '' });
    const other = dir('hmdp-next-other', HOUR, { 'next.sock': '', 'notes.txt': 'keep' });
    const unrelated = dir('something-else', HOUR);

    const removed = await sweepStaleSocketDirs(root);
    expect(removed.sort()).toEqual([empty, stale].sort());
    for (const d of [stale, empty]) expect(existsSync(d)).toBe(false);
    for (const d of [running, young, other, unrelated]) expect(existsSync(d)).toBe(true);
  });

  it('a directory is made again when gone, and refused when others may enter it', () => {
    const d = path.join(root, 'hmdp-next-check');
    expect(socketDirProblem(d)).toBeNull();
    expect(existsSync(d)).toBe(true);
    chmodSync(d, 0o755);
    expect(socketDirProblem(d)).toBe('is open to other users');
    const f = path.join(root, 'hmdp-next-file');
    writeFileSync(f, '');
    expect(socketDirProblem(f)).toBe('is not a directory');
  });
});
