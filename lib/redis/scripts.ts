/**
 * Lua loader. Every lua/<name>-<numberOfKeys>.lua becomes an ioredis command named after the file
 * (camelCased name), sent with EVALSHA and falling back to EVAL when the server lacks the script.
 * Call them through `runScript` so a typo is a type error, not a runtime "undefined is not a function".
 *
 * A line `--#include <file>.lua` is replaced by lua/include/<file>.lua: logic that two scripts run
 * (a turn kept, the bot gate passed) lives once, as a local function, while each script stays one
 * round trip. The SHA1 is the expanded script's: what Redis runs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { RedisClient } from '@/lib/redis/types';
import type { ScriptName } from '@/lib/redis/script-names';

export interface ScriptDef {
  name: string;
  command: string;
  numberOfKeys: number;
  lua: string;
  sha1: string;
}

let cache: Map<string, ScriptDef> | undefined;

export function loadScripts(): Map<string, ScriptDef> {
  if (cache) return cache;
  const out = new Map<string, ScriptDef>();
  for (const file of readdirSync(path.join(process.cwd(), 'lua')).filter((f) => f.endsWith('.lua')).sort()) {
    const m = /^([a-z0-9-]+)-(\d+)\.lua$/.exec(file);
    if (!m) throw new Error(`lua/${file}: name must be <name>-<numberOfKeys>.lua`);
    const name = m[1]!;
    const lua = withIncludes(file, readFileSync(path.join(process.cwd(), 'lua', file), 'utf8'));
    if (!lua.trimStart().startsWith('--[[')) throw new Error(`lua/${file}: must open with a --[[ header ]] block`);
    out.set(name, {
      name,
      command: name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase()),
      numberOfKeys: Number(m[2]),
      lua,
      sha1: createHash('sha1').update(lua).digest('hex'),
    });
  }
  cache = out;
  return out;
}

const INCLUDE = /^--#include (\S*)$/gm;

function withIncludes(file: string, lua: string): string {
  return lua.replace(INCLUDE, (_, name: string) => {
    if (!/^[a-z0-9-]+\.lua$/.test(name)) throw new Error(`lua/${file}: --#include takes a file of lua/include/, not "${name}"`);
    const part = readFileSync(path.join(process.cwd(), 'lua', 'include', name), 'utf8');
    if (/^--#include /m.test(part)) throw new Error(`lua/include/${name}: an included file includes nothing itself`);
    return part.trimEnd();
  });
}

export function defineScripts(client: RedisClient): void {
  for (const s of loadScripts().values()) {
    client.defineCommand(s.command, { numberOfKeys: s.numberOfKeys, lua: s.lua });
  }
}

/** A script's name is its file name without `-<numberOfKeys>.lua` (generated union: npm run lua:names). */
export type { ScriptName };

/**
 * Not async: the command's own promise is returned as it is (an async wrapper would add a promise
 * and a microtask turn to every script call of the hot path). A bad call rejects all the same.
 */
export function runScript<T = unknown>(
  client: RedisClient,
  name: ScriptName,
  keys: (string | number)[],
  args: (string | number)[] = [],
): Promise<T> {
  const def = loadScripts().get(name);
  if (!def) return Promise.reject(new Error(`No Lua script lua/${name}-*.lua`));
  if (keys.length !== def.numberOfKeys) {
    return Promise.reject(new Error(`Script ${name} takes ${def.numberOfKeys} keys, got ${keys.length}`));
  }
  const fn = (client as unknown as Record<string, (...a: (string | number)[]) => Promise<T>>)[def.command];
  if (typeof fn !== 'function') return Promise.reject(new Error(`Script ${name} is not defined on this client`));
  return fn.call(client, ...keys, ...args);
}
