/** The system under test: N web instances (production build) and M order workers. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { kill, ROOT, start, waitHttp, type Proc } from './procs';

export class Cluster {
  readonly webs = new Map<number, Proc>();
  readonly workers = new Map<number, Proc>();
  private seq = 0;

  constructor(private readonly env: NodeJS.ProcessEnv, readonly webPorts: number[], private readonly workerCount: number) {
    if (!existsSync(path.join(ROOT, '.next', 'BUILD_ID'))) throw new Error('no production build: run `npx next build` first');
  }

  url(port: number) {
    return `http://127.0.0.1:${port}`;
  }

  async startWeb(port: number): Promise<void> {
    const env = { ...this.env, PORT: String(port) };
    this.webs.set(port, start(`web-${port}-${++this.seq}`, process.execPath, ['--import', 'tsx', 'workers/web-server.ts'], env));
    await waitHttp(`${this.url(port)}/api/health`, 90_000);
  }

  startWorker(i: number): void {
    this.workers.set(i, start(`worker-${i}-${++this.seq}`, 'node_modules/.bin/tsx', ['workers/background.ts'], this.env));
  }

  async start(): Promise<void> {
    await Promise.all(this.webPorts.map((p) => this.startWeb(p)));
    for (let i = 1; i <= this.workerCount; i++) this.startWorker(i);
  }

  async killWeb(port: number): Promise<void> {
    const p = this.webs.get(port);
    if (p) await kill(p, 'SIGKILL');
  }

  async killWorker(i: number): Promise<void> {
    const p = this.workers.get(i);
    if (p) await kill(p, 'SIGKILL');
  }

  async stop(): Promise<void> {
    await Promise.all([...this.webs.values(), ...this.workers.values()].map((p) => kill(p, 'SIGTERM')));
  }
}
