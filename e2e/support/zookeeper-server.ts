/**
 * Throwaway ZooKeeper servers for the lock tests, on fixed loopback ports 2282-2289 (2281 is the
 * one `scripts/services.sh zookeeper` starts). They go through scripts/zookeeper.sh, which also
 * installs Debian's package where it is missing, so the tests need nothing started beforehand.
 * A 100 ms tick lets clients ask for sessions as short as 200 ms.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const SCRIPT = path.join(process.cwd(), 'scripts/zookeeper.sh');

const zk = (cmd: 'fresh' | 'start' | 'stop', port: number) =>
  execFileSync('bash', [SCRIPT, cmd, String(port), '100'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 120_000 }).trim();

export class TestZooKeeper {
  constructor(readonly port: number) {}
  get connect() {
    return `127.0.0.1:${this.port}`;
  }
  /** Starts with empty data. */
  fresh(): void {
    zk('fresh', this.port);
  }
  /** Starts again on the data it had (sessions and znodes survive, as after a real restart). */
  start(): void {
    zk('start', this.port);
  }
  /** SIGKILL: a crash. */
  stop(): void {
    zk('stop', this.port);
  }
}
