/**
 * The layering ESLint cannot say (docs/recipes.md#layering): no two folders of lib/ import
 * each other, directly or round a longer loop, and lib/redis imports no domain folder. Built from
 * the import lines of the product's own files (tests excluded: a test may reach across).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^'"`;]*?from\s*['"]@\/lib\/([\w-]+)(?:\/[^'"]*)?['"]|import\(\s*['"]@\/lib\/([\w-]+)[^'"]*['"]\s*\)/g;

function productFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return productFiles(p);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [p] : [];
  });
}

/** folder → the other lib/ folders its files import (a top-level file such as lib/env.ts is its own node). */
export function folderGraph(lib = path.join(ROOT, 'lib')): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of productFiles(lib)) {
    const from = (path.relative(lib, file).split(path.sep)[0] ?? '').replace(/\.tsx?$/, '');
    const edges = graph.get(from) ?? graph.set(from, new Set()).get(from)!;
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const to = (m[1] ?? m[2] ?? '').replace(/\.tsx?$/, '');
      if (to !== from) edges.add(to);
    }
  }
  return graph;
}

/** Every strongly connected group of more than one folder (Tarjan). */
export function cycles(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) out.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe('layering of lib/', () => {
  it('finds a cycle when there is one (the check itself)', () => {
    const g = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
      ['d', new Set(['a'])],
    ]);
    expect(cycles(g)).toEqual([['a', 'b', 'c']]);
  });

  it('no two folders import each other, directly or round a loop', () => {
    expect(cycles(folderGraph())).toEqual([]);
  });

  it('lib/redis imports no domain folder (modules register their own close hooks)', () => {
    const allowed = new Set(['env', 'log', 'errors', 'bounded-memory', 'maybe-promise']);
    expect([...(folderGraph().get('redis') ?? [])].filter((f) => !allowed.has(f))).toEqual([]);
  });
});
