/**
 * Next's socket directory of a split web server (WEB_PART=split, docs/hot-server.md#the-split-server):
 * made by the primary (mkdtemp: 0700), checked before each start of Next's process, and the ones
 * left behind by servers killed outright swept away.
 */
import { lstatSync, mkdirSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const SOCKET_DIR_PREFIX = 'hmdp-next-';
export const SOCKET_NAME = 'next.sock';

/**
 * Why Next's socket directory is not safe to listen in, or null: it is made again if it is gone
 * (0700, as mkdtemp made it), and must be a directory of this user's that nobody else may enter.
 */
export function socketDirProblem(dir: string): string | null {
  try {
    mkdirSync(dir, { mode: 0o700 });
    return null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return `cannot be made (${(err as Error).message})`;
  }
  const st = lstatSync(dir);
  if (!st.isDirectory()) return 'is not a directory';
  if (st.uid !== process.getuid?.()) return 'belongs to another user';
  if ((st.mode & 0o077) !== 0) return 'is open to other users';
  return null;
}

/** True when something accepts connections on the unix socket `file`. */
function answers(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(file);
    s.setTimeout(1000, () => {
      // Accepted by nobody in time: a process there, but stuck. Not ours to remove.
      s.destroy();
      resolve(true);
    });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code !== 'ECONNREFUSED' && err.code !== 'ENOENT' && err.code !== 'ENOTSOCK'));
  });
}

/**
 * Removes the socket directories servers left behind when they were killed outright together with
 * their Next (a SIGKILL to the whole group leaves nobody to clean up): this user's `hmdp-next-*`
 * directories under `root`, untouched for `minAgeMs`, holding nothing but a socket nobody listens
 * on (or nothing). A running server's socket answers; one whose Next is between two copies gets its
 * directory made again by its primary (socketDirProblem) before the next copy starts. Returns the
 * directories removed.
 */
export async function sweepStaleSocketDirs(root: string, minAgeMs = 10 * 60_000, now = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(root).filter((n) => n.startsWith(SOCKET_DIR_PREFIX));
  } catch {
    return removed;
  }
  for (const name of names) {
    const dir = path.join(root, name);
    try {
      const st = lstatSync(dir);
      if (!st.isDirectory() || st.uid !== process.getuid?.() || now - st.mtimeMs < minAgeMs) continue;
      const inside = readdirSync(dir);
      if (inside.some((f) => f !== SOCKET_NAME)) continue;
      if (inside.length && (await answers(path.join(dir, SOCKET_NAME)))) continue;
      rmSync(path.join(dir, SOCKET_NAME), { force: true });
      rmdirSync(dir);
      removed.push(dir);
    } catch {
      // gone meanwhile, or not ours to read: leave it
    }
  }
  return removed;
}
