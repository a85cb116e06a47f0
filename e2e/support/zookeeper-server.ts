/**
 * Throwaway ZooKeeper servers for the lock tests, on fixed loopback ports 2282-2289 (2281 is the
 * one `scripts/services.sh zookeeper` starts). They go through scripts/zookeeper.sh, which also
 * installs Debian's package where it is missing, so the tests need nothing started beforehand.
 * A 100 ms tick lets clients ask for sessions as short as 200 ms.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
  /** SIGKILL at once, without the script's round trip (to land inside a short critical section); stop() then waits for the port. */
  kill(): void {
    process.kill(Number(readFileSync(path.join(process.cwd(), `.run/zookeeper-${this.port}/pid`), 'utf8')), 'SIGKILL');
  }
}

/**
 * A throwaway ensemble of `size` servers on loopback through scripts/zookeeper.sh: server i
 * serves clients on base+i, its peers talk on base+size+i and vote on base+2·size+i, so it takes
 * the ports base..base+3·size-1 (the ensemble tests use 2301-2309). 100 ms ticks: sessions of
 * 200-2000 ms, a lost leader replaced within about half a second.
 */
export class TestZooKeeperEnsemble {
  readonly servers: TestZooKeeper[];
  constructor(
    readonly base: number,
    readonly size = 3,
  ) {
    this.servers = Array.from({ length: size }, (_, i) => new TestZooKeeper(base + i));
  }
  get connect() {
    return this.servers.map((s) => s.connect).join(',');
  }
  private run(args: string[]) {
    return execFileSync('bash', [SCRIPT, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 120_000 }).trim();
  }
  /** Every server wiped and started; resolves once all of them serve (a leader was elected). */
  fresh(): void {
    this.run(['ensemble-fresh', String(this.base), String(this.size), '100']);
  }
  /** The server that leads right now (asked with the `srvr` command). */
  leader(): TestZooKeeper {
    const port = Number(this.run(['leader', String(this.base), String(this.size)]));
    return this.servers.find((s) => s.port === port)!;
  }
  /** SIGKILLs every server. */
  stop(): void {
    this.run(['ensemble-stop', String(this.base), String(this.size)]);
  }
}
