/** Spawns e2e/support/lock-contender.ts as a real child process for the cross-process lock tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const CONTENDER = path.join(process.cwd(), 'e2e/support/lock-contender.ts');
const children: ChildProcess[] = [];

export function contender(args: string[], env: NodeJS.ProcessEnv = process.env) {
  // One node process with tsx as a loader (the tsx CLI would fork a second one that SIGKILL misses).
  const child = spawn(process.execPath, ['--import', 'tsx', CONTENDER, ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  /** Resolves with the rest of the first stdout line starting with `prefix`. */
  const line = (prefix: string) =>
    new Promise<string>((resolve, reject) => {
      const look = () => {
        const hit = out.split('\n').find((l) => l.startsWith(`${prefix} `));
        if (hit) resolve(hit.slice(prefix.length + 1));
      };
      child.stdout.on('data', look);
      void exited.then((code) => (look(), reject(new Error(`contender exited ${code} before ${prefix}`))));
    });
  return { child, exited, line };
}

/** SIGKILLs every contender still running (afterAll). */
export function killContenders(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}
