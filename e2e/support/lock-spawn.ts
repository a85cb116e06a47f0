/**
 * Spawns e2e/support/lock-contender.ts (the cross-process lock tests) or
 * e2e/support/product-lock-client.ts (the product's locks on each backend) as a real child process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const CONTENDER = path.join(process.cwd(), 'e2e/support/lock-contender.ts');
const PRODUCT_CLIENT = path.join(process.cwd(), 'e2e/support/product-lock-client.ts');
const children: ChildProcess[] = [];

export function contender(args: string[], env: NodeJS.ProcessEnv = process.env) {
  return spawnScript(CONTENDER, args, env);
}

export function productLockClient(args: string[], env: NodeJS.ProcessEnv = process.env) {
  return spawnScript(PRODUCT_CLIENT, args, env);
}

function spawnScript(script: string, args: string[], env: NodeJS.ProcessEnv) {
  // One node process with tsx as a loader (the tsx CLI would fork a second one that SIGKILL misses).
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  /** Resolves with the rest of the first stdout line starting with `prefix`. */
  const line = (prefix: string) =>
    new Promise<string>((resolve, reject) => {
      const look = () => {
        const hit = out.split('\n').find((l) => l.startsWith(`${prefix} `));
        if (!hit) return;
        child.stdout.off('data', look); // many line() calls on one child must not pile up listeners
        resolve(hit.slice(prefix.length + 1));
      };
      child.stdout.on('data', look);
      look(); // it may have arrived already
      void exited.then((code) => (look(), reject(new Error(`contender exited ${code} before ${prefix}`))));
    });
  /** Every stdout line so far. */
  const lines = () => out.split('\n').filter(Boolean);
  return { child, exited, line, lines };
}

/** SIGKILLs every contender still running (afterAll). */
export function killContenders(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}
