/** lib/redis/script-names.ts is generated from lua/ (scripts/script-names.ts): this fails when it is stale. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ScriptName } from '@/lib/redis/script-names';
import { luaScriptNames, renderScriptNames, SCRIPT_NAMES_FILE } from './script-names';

describe('lib/redis/script-names.ts', () => {
  it('is the file npm run lua:names writes from lua/', () => {
    expect(readFileSync(SCRIPT_NAMES_FILE, 'utf8') === renderScriptNames(), `${SCRIPT_NAMES_FILE} is stale: run npm run lua:names and commit it`).toBe(true);
  });

  it('names every script once and notices a new one', () => {
    const names = luaScriptNames();
    expect(names).toContain('seckill-grab');
    expect(new Set(names).size).toBe(names.length);
    expect(renderScriptNames([...names, 'zz-new'])).not.toBe(renderScriptNames(names));
  });

  it('makes a misspelt name a type error (checked by tsc)', () => {
    const name = (n: ScriptName) => n;
    // @ts-expect-error no lua/seckill-grap-*.lua exists
    expect(name('seckill-grap')).toBe('seckill-grap');
  });
});
