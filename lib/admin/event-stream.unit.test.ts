import { describe, expect, it } from 'vitest';
import { eventStream } from '@/lib/admin/event-stream';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function readEvents(reader: ReadableStreamDefaultReader<Uint8Array>, n: number): Promise<string[]> {
  const dec = new TextDecoder();
  let buf = '';
  while (buf.split('\n\n').filter((b) => b.startsWith('event:')).length < n) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value);
  }
  return buf.split('\n\n').filter((b) => b.startsWith('event:'));
}

describe('eventStream', () => {
  it('sends one event per tick and stops ticking when the client aborts', async () => {
    let ticks = 0;
    const ac = new AbortController();
    const reader = eventStream(async () => ({ n: ++ticks }), ac.signal, { event: 'stock', intervalMs: 20 }).getReader();
    const events = await readEvents(reader, 3);
    expect(events[0]).toBe('event: stock\ndata: {"n":1}');
    expect(events.length).toBeGreaterThanOrEqual(3);
    ac.abort();
    await sleep(30);
    const after = ticks;
    await sleep(150);
    expect(ticks).toBe(after);
    // The stream is finished for the reader too.
    for (;;) if ((await reader.read()).done) break;
  });

  it('a failing tick sends tick-error and keeps going; maxMs ends the stream', async () => {
    let calls = 0;
    const tick = async () => {
      if (++calls === 1) throw new Error('db down');
      return { ok: true };
    };
    const reader = eventStream(tick, new AbortController().signal, { event: 'stock', intervalMs: 10, maxMs: 60 }).getReader();
    const text: string[] = [];
    const dec = new TextDecoder();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text.push(dec.decode(value));
    }
    const all = text.join('');
    expect(all).toContain('event: tick-error');
    expect(all).toContain('event: stock\ndata: {"ok":true}');
    expect(all).not.toContain('db down');
  });

  it('stillAllowed: false ends with session-ended, a string ends with that reason', async () => {
    for (const [answer, reason] of [[false, 'session-ended'], ['too-many-streams', 'too-many-streams']] as const) {
      let checks = 0;
      const reader = eventStream(async () => ({ ok: true }), new AbortController().signal, { event: 'stock', intervalMs: 10, stillAllowed: async () => (++checks < 3 ? true : answer) }).getReader();
      const dec = new TextDecoder();
      let all = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        all += dec.decode(value);
      }
      expect(all.match(/event: stock/g)).toHaveLength(2);
      expect(all).toContain(`event: end\ndata: {"reason":"${reason}"}`);
    }
  });
});
