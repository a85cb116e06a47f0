/**
 * Private MariaDB, Redis and RabbitMQ servers on spare ports, owned by the fault suite alone,
 * so it can really kill and restart them without touching anybody else's services. They use the
 * machine's installed binaries (scripts/services.sh installs them on Debian).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isListening, kill, RUN_DIR, start, waitFor, type Proc } from './procs';

const need = (bin: string) => {
  for (const dir of ['/usr/lib/rabbitmq/bin', '/usr/sbin', '/usr/bin']) if (existsSync(path.join(dir, bin))) return path.join(dir, bin);
  throw new Error(`the fault suite needs ${bin} installed locally (Debian: apt-get install mariadb-server redis-server rabbitmq-server)`);
};

/**
 * Where a private server listens: loopback by default; the partition cases (e2e/faults/partitions.ts)
 * run it inside a host of scripts/netns.sh, on that host's address.
 */
export interface Placement {
  host: string;
  /** The network namespace to start it in (`ip netns exec`), or none. */
  netns?: string;
}
const LOOPBACK: Placement = { host: '127.0.0.1' };

abstract class Service {
  protected proc?: Proc;
  constructor(readonly name: string, readonly port: number, readonly at: Placement = LOOPBACK) {}
  protected abstract launch(): Proc;
  /** `start` inside the placement's namespace, if it has one. */
  protected spawn(cmd: string, args: string[], env?: NodeJS.ProcessEnv): Proc {
    return this.at.netns ? start(this.name, 'ip', ['netns', 'exec', this.at.netns, cmd, ...args], env) : start(this.name, cmd, args, env);
  }
  async start(): Promise<void> {
    this.proc = this.launch();
    await waitFor(`${this.name} on ${this.at.host}:${this.port}`, () => isListening(this.port, this.at.host), 90_000);
  }
  /** A crash, not a shutdown: SIGKILL. */
  async crash(): Promise<void> {
    if (this.proc) await kill(this.proc, 'SIGKILL');
    await waitFor(`${this.name} to go down`, async () => !(await isListening(this.port, this.at.host)), 20_000);
  }
  async stop(): Promise<void> {
    if (this.proc) await kill(this.proc, 'SIGTERM');
  }
}

export class PrivateRedis extends Service {
  readonly dir = path.join(RUN_DIR, 'redis');
  /** `fsync`: the AOF policy, or 'off' for no persistence at all (a default redis-server). */
  constructor(port: number, readonly fsync: 'always' | 'everysec' | 'off' = 'always') {
    super('redis', port);
    rmSync(this.dir, { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true });
  }
  get url() {
    return `redis://127.0.0.1:${this.port}/0`;
  }
  protected launch(): Proc {
    // AOF with fsync on every write (the default here): a crash loses no acknowledged grab.
    const aof = this.fsync === 'off' ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', this.fsync];
    return this.spawn(need('redis-server'), [
      '--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', ...aof, '--maxmemory-policy', 'noeviction',
    ]);
  }
}

export class PrivateMariaDb extends Service {
  readonly dir = path.join(RUN_DIR, 'mariadb');
  constructor(port: number, at?: Placement) {
    super('mariadb', port, at);
    rmSync(this.dir, { recursive: true, force: true });
    execFileSync(need('mariadb-install-db'), ['--no-defaults', `--datadir=${this.dir}`, '--auth-root-authentication-method=normal', '--skip-test-db', '--user=root'], { stdio: 'ignore' });
  }
  get url() {
    return `mysql://root@${this.at.host}:${this.port}/hmdp_fault`;
  }
  async start(): Promise<void> {
    await super.start();
    // Off loopback, root arrives from the hosts' addresses (not localhost): let it in from the
    // placement's /24, through the server's own socket.
    if (this.at.host !== '127.0.0.1') {
      const net = this.at.host.split('.').slice(0, 3).join('.');
      execFileSync(need('mariadb'), ['--no-defaults', `--socket=${path.join(this.dir, 'sock')}`, '-uroot', '-e',
        `CREATE USER IF NOT EXISTS 'root'@'${net}.%'; GRANT ALL ON *.* TO 'root'@'${net}.%' WITH GRANT OPTION;`]);
    }
  }
  protected launch(): Proc {
    return this.spawn(need('mariadbd'), [
      '--no-defaults', `--datadir=${this.dir}`, `--port=${this.port}`, `--bind-address=${this.at.host}`,
      `--socket=${path.join(this.dir, 'sock')}`, '--user=root', '--skip-name-resolve', '--innodb-flush-log-at-trx-commit=1',
    ]);
  }
}

export class PrivateRabbit extends Service {
  readonly dir = path.join(RUN_DIR, 'rabbitmq');
  constructor(port: number, private readonly distPort: number, at?: Placement) {
    super('rabbitmq', port, at);
    rmSync(this.dir, { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(path.join(this.dir, 'enabled_plugins'), '[].');
    writeFileSync(path.join(this.dir, 'rabbitmq.conf'), `listeners.tcp.default = ${this.at.host}:${port}\nloopback_users = none\n`);
  }
  get url() {
    return `amqp://guest:guest@${this.at.host}:${this.port}`;
  }
  protected launch(): Proc {
    // The Debian wrapper drops the environment when it switches user; call the real script.
    return this.spawn(need('rabbitmq-server'), [], {
      ...process.env,
      HOME: this.dir,
      RABBITMQ_CONF_ENV_FILE: '/dev/null',
      RABBITMQ_CONFIG_FILE: path.join(this.dir, 'rabbitmq.conf'),
      RABBITMQ_NODENAME: `hmdpfault${this.port}@localhost`,
      RABBITMQ_NODE_PORT: String(this.port),
      RABBITMQ_DIST_PORT: String(this.distPort),
      RABBITMQ_MNESIA_BASE: path.join(this.dir, 'mnesia'),
      RABBITMQ_LOG_BASE: path.join(this.dir, 'log'),
      RABBITMQ_ENABLED_PLUGINS_FILE: path.join(this.dir, 'enabled_plugins'),
    });
  }
}
