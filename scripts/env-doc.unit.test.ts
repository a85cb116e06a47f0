/**
 * docs/configuration.md is generated from lib/env.ts (scripts/env-doc.ts): these fail when a knob
 * has no doc comment, is missing from .env.example, or the page no longer matches the code.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENV_DOC, readKnobs, renderEnvDoc } from './env-doc';

describe('docs/configuration.md', () => {
  it('every knob in lib/env.ts has a /** … */ comment saying what it does', () => {
    const missing = readKnobs().filter((k) => !k.description).map((k) => k.name);
    expect(missing, `add a /** … */ comment above ${missing.join(', ')} in lib/env.ts, then run: npm run docs:env`).toEqual([]);
  });

  it('every knob is listed in .env.example', () => {
    const example = readFileSync('.env.example', 'utf8');
    const missing = readKnobs()
      .map((k) => k.name)
      .filter((name) => !new RegExp(`^#?\\s*${name}=`, 'm').test(example));
    expect(missing, `add ${missing.join(', ')} to .env.example (commented out with its default is fine)`).toEqual([]);
  });

  it('is the page npm run docs:env writes from lib/env.ts', async () => {
    const onDisk = readFileSync(ENV_DOC, 'utf8');
    expect(onDisk === (await renderEnvDoc()), `${ENV_DOC} is stale: run npm run docs:env and commit it`).toBe(true);
  });

  it('reads a knob without a comment as undocumented and keeps the group headings', () => {
    const knobs = readKnobs(
      'const schema = z.object({\n  // ── one ──\n  /** Documented. */\n  A: int(1),\n  B: int(2),\n  // ── two ──\n  /**\n   * Two\n   * lines.\n   */\n  C: int(3),\n});',
    );
    expect(knobs).toEqual([
      { name: 'A', group: 'one', description: 'Documented.' },
      { name: 'B', group: 'one', description: '' },
      { name: 'C', group: 'two', description: 'Two lines.' },
    ]);
  });
});
