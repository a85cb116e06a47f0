import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { acceptPolicy, DEEP_LISTEN_QUEUE, kernelListenQueue } from '@/workers/accept-policy';

describe('who accepts the connections', () => {
  it('one process accepts for itself only over a deep kernel queue; several processes, a shallow or unknown queue: the primary hands them out', () => {
    expect(acceptPolicy(1, undefined, DEEP_LISTEN_QUEUE)).toBe('none');
    expect(acceptPolicy(1, undefined, 65_535)).toBe('none');
    expect(acceptPolicy(1, undefined, 4096)).toBe('rr');
    expect(acceptPolicy(1, undefined, null)).toBe('rr');
    expect(acceptPolicy(2, undefined, 65_535)).toBe('rr');
  });

  it('NODE_CLUSTER_SCHED_POLICY decides when it names a policy (none or rr); unset or anything else, the rule above', () => {
    expect(acceptPolicy(1, 'rr', 65_535)).toBe('rr');
    expect(acceptPolicy(4, 'none', 128)).toBe('none');
    expect(acceptPolicy(1, 'bogus', 65_535)).toBe('none');
  });

  it("reads the kernel's cap, and null for a file that is missing or not a number", () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'somaxconn-'));
    writeFileSync(path.join(dir, 'ok'), '4096\n');
    writeFileSync(path.join(dir, 'bad'), 'x\n');
    expect(kernelListenQueue(path.join(dir, 'ok'))).toBe(4096);
    expect(kernelListenQueue(path.join(dir, 'bad'))).toBeNull();
    expect(kernelListenQueue(path.join(dir, 'missing'))).toBeNull();
  });
});
