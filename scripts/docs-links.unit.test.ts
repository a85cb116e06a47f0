/**
 * Comments explain by pointing at docs/<topic>.md#anchor, and the docs link to each other: every
 * such pointer must land on a file and a heading that exist, and no code comment points at the
 * README (it is the front page, not the reference).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const CODE = /\.(ts|tsx|mjs|js|lua|sh|sql)$/;
const SKIP = new Set(['node_modules', '.next', '.git', '.run', 'data', 'test-results', 'playwright-report']);

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

/** GitHub's heading anchor: lower case, punctuation dropped (letters of any script kept), spaces → '-'. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let inCode = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) inCode = !inCode;
    const m = !inCode && /^#{1,6} (.+)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

const files = walk('.');
const docs = files.filter((f) => f.startsWith('docs/') && f.endsWith('.md'));

function broken(target: string, from: string): string | null {
  const [file, anchor] = target.split('#') as [string, string | undefined];
  const resolved = file ? path.normalize(path.join(from.endsWith('.md') ? path.dirname(from) : '.', file)) : from;
  if (!existsSync(resolved)) return `${from}: ${target} (no file ${resolved})`;
  if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) return `${from}: ${target} (no heading with anchor #${anchor} in ${resolved})`;
  return null;
}

describe('pointers into docs/', () => {
  it('slugs headings the way GitHub does', () => {
    expect(slug("The accepted grab's own work")).toBe('the-accepted-grabs-own-work');
    expect(slug('Shape (a) and shape (b)')).toBe('shape-a-and-shape-b');
    expect(slug('点评: notes, likes')).toBe('点评-notes-likes');
    expect(slug('What `npm test` runs')).toBe('what-npm-test-runs');
  });

  it('every docs/<file>.md#anchor in a code comment exists', () => {
    const bad: string[] = [];
    for (const f of files.filter((x) => CODE.test(x))) {
      for (const m of readFileSync(f, 'utf8').matchAll(/\bdocs\/([\w-]+\.md(?:#[\p{L}\p{N}_-]+)?)/gu)) {
        const problem = broken('docs/' + m[1]!, f);
        if (problem) bad.push(problem);
      }
    }
    expect(bad, 'fix the pointer or the heading').toEqual([]);
  });

  it('every relative link in README.md and docs/ lands on a file and a heading that exist', () => {
    const bad: string[] = [];
    for (const f of ['README.md', ...docs]) {
      for (const m of readFileSync(f, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        const problem = broken(target, f);
        if (problem) bad.push(problem);
      }
    }
    expect(bad).toEqual([]);
  });

  it('no code comment points at the README', () => {
    const hits = files
      .filter((x) => CODE.test(x) && x !== 'scripts/docs-links.unit.test.ts')
      .flatMap((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .map((line, i) => [line, i] as const)
          .filter(([line]) => /\bREADME\b/.test(line))
          .map(([line, i]) => `${f}:${i + 1}: ${line.trim()}`),
      );
    expect(hits, 'point at docs/<topic>.md#anchor instead').toEqual([]);
  });
});
