/**
 * Hosts on this machine as network namespaces (scripts/netns.sh): start a process on a host, cut
 * and heal links between hosts, tear everything down. The test driver itself stays in the
 * machine's own namespace and reaches every host over the bridge (it plays the buyers' side and
 * the observer; a cut never involves it).
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { start, type Proc } from '../procs';

export const HOSTS = ['db', 'front', 'web1', 'web2', 'worker', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'mq1', 'mq2', 'mq3'] as const;
export type Host = (typeof HOSTS)[number];
export const REDIS_HOSTS: Host[] = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'];
const OCTET: Record<Host, number> = { db: 2, front: 10, web1: 11, web2: 12, worker: 13, r1: 21, r2: 22, r3: 23, r4: 24, r5: 25, r6: 26, mq1: 31, mq2: 32, mq3: 33 };

export const addr = (h: Host) => `10.77.0.${OCTET[h]}`;
export const nsOf = (h: Host) => `hmdp-${h}`;
export function hostOf(ip: string): Host {
  const h = HOSTS.find((x) => addr(x) === ip);
  if (!h) throw new Error(`no host has address ${ip}`);
  return h;
}

const run = promisify(execFile);
/**
 * scripts/netns.sh, without blocking the event loop: a storm runs in this process while hosts are
 * cut, healed and asked (a synchronous call would stall the buyers and skew every timing).
 */
export const netns = async (...args: string[]) => (await run('bash', ['scripts/netns.sh', ...args], { encoding: 'utf8', maxBuffer: 1 << 22 })).stdout;
/** For teardown on the way out, where nothing else runs any more. */
export const netnsSync = (...args: string[]) => execFileSync('bash', ['scripts/netns.sh', ...args], { encoding: 'utf8' });
/** redis-cli against a Redis host (port 7000), bounded. */
export const redisCli = async (h: Host, ...args: string[]) => (await run('redis-cli', ['-h', addr(h), '-p', '7000', ...args], { encoding: 'utf8', timeout: 3000 })).stdout;

/**
 * Null when namespaces can be made here, else why not (not root, no iproute2, no CAP_SYS_ADMIN):
 * the one case where the partition suite skips instead of running.
 */
export function whyNoNetns(): string | null {
  if (process.platform !== 'linux') return `network namespaces are Linux only (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'network namespaces need root (run as root, as CI does)';
  try {
    execFileSync('ip', ['-V'], { stdio: 'ignore' });
  } catch {
    return 'iproute2 (`ip`) is not installed';
  }
  try {
    execFileSync('ip', ['netns', 'add', 'hmdp-probe'], { stdio: 'pipe' });
    execFileSync('ip', ['netns', 'del', 'hmdp-probe'], { stdio: 'pipe' });
  } catch (e) {
    return `cannot create a network namespace here: ${String((e as { stderr?: Buffer }).stderr ?? e).trim()}`;
  }
  return null;
}

/** A process running on a host. */
export function startOn(host: Host, name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv): Proc {
  return start(name, 'ip', ['netns', 'exec', nsOf(host), cmd, ...args], env);
}

/**
 * The bridge already exists: another partition run on this machine, or one that died without its
 * teardown. A leftover (no process in any hmdp- namespace) is removed; a live run is not touched.
 */
export function claimTopology(): void {
  let exists = true;
  try {
    execFileSync('ip', ['link', 'show', 'hmdpbr0'], { stdio: 'ignore' });
  } catch {
    exists = false;
  }
  if (!exists) return;
  const spaces = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n').map((l) => l.split(' ')[0]!).filter((n) => n.startsWith('hmdp-'));
  const busy = spaces.filter((n) => execFileSync('ip', ['netns', 'pids', n], { encoding: 'utf8' }).trim() !== '');
  if (busy.length) throw new Error(`another partition run owns the hosts (processes in ${busy.join(', ')}); wait for it, or 'bash scripts/netns.sh down'`);
  netnsSync('down');
}

/** Every link between the two groups cut, both directions. */
export async function partition(a: Host[], b: Host[]): Promise<void> {
  await netns('cut', a.join(','), b.join(','));
}

export async function healAll(): Promise<void> {
  await netns('heal');
}
