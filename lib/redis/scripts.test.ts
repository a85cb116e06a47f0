import { describe, expect, it } from 'vitest';
import { loadScripts } from '@/lib/redis/scripts';

/**
 * Every Lua script's SHA1 is pinned, so changing a script is a deliberate act (and a reviewer
 * sees it). After an intended change, update the hash here in the same commit.
 */
const pinned: Record<string, string> = {
  'login-check-code': '8f849ba0808a1182703e8caf18654c818bf68303',
};

describe('lua/ scripts', () => {
  const scripts = loadScripts();

  it('every script is pinned and no pin is stale', () => {
    expect([...scripts.keys()].sort()).toEqual(Object.keys(pinned).sort());
  });

  it.each(Object.entries(pinned))('%s has the pinned SHA1', (name, sha) => {
    expect(scripts.get(name)?.sha1).toBe(sha);
  });

  it('every script opens with a header naming KEYS, ARGV and what it returns', () => {
    for (const s of scripts.values()) {
      const header = s.lua.slice(0, s.lua.indexOf(']]'));
      expect(header, s.name).toMatch(/KEYS/);
      expect(header, s.name).toMatch(/ARGV/);
      expect(header, s.name).toMatch(/Returns/i);
    }
  });
});
