/**
 * Tests only: the hot server's door for lib/test callRoute. A call whose handler is one of the hot
 * routes is sent over real HTTP to an in-process hot server (started once per test file, on a free
 * port, with a 404 fallback); any other handler is left to the direct call (null).
 */
import type { AddressInfo } from 'node:net';
import { hotRoutes } from '@/app/api/hot-routes';
import { createHotServer } from '@/lib/hot/server';
import { writeReply } from '@/lib/hot/node-adapter';
import type { CallOptions } from '@/lib/test/helpers';

let base: Promise<string> | undefined;

function hotServerUrl(): Promise<string> {
  base ??= new Promise((resolve) => {
    const server = createHotServer({
      routes: hotRoutes,
      maxInFlight: 100_000,
      fallback: (_req, res) => writeReply(res, { status: 404, body: { error: { code: 'NOT_FOUND', message: 'not a hot route' } } }),
    });
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
    server.unref();
  });
  return base;
}

export async function callThroughHotServer(handler: unknown, opts: CallOptions) {
  const route = hotRoutes.find((r) => r.handler === handler);
  if (!route) return null;
  const path = route.path.replace(/\[(\w+)\]/g, (_, p: string) => encodeURIComponent(opts.params?.[p] ?? ''));
  const url = new URL(path, await hotServerUrl());
  for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
  const headers = new Headers(opts.headers);
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  if (opts.token) headers.set('authorization', `Bearer ${opts.token}`);
  const res = await fetch(url, { method: opts.method ?? (body ? 'POST' : 'GET'), headers, body });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}
