/**
 * Who accepts the connections of a clustered web server (docs/hot-server.md#who-accepts). node's
 * default (round-robin) has the primary accept each connection and hand it to a process over IPC,
 * one at a time, waiting for that process's answer before the next: with one web process this is
 * pure overhead, an IPC round trip per connection, and in a spike the primary competes for the
 * cores with everything else (measured: the app's last answer 5.0–6.0 s under round-robin, 3.8–4.3 s
 * with the process accepting for itself, docs/hot-server.md#who-accepts). With one process the kernel's listen queue is the only
 * queue left, though: a spike that outruns a shallow one (128 on old kernels, 4096 by default on
 * current ones) drops connections that round-robin's primary would have taken (282 socket errors
 * in a 20 000-user spike with 4096). So a lone process accepts for itself only when
 * net.core.somaxconn is deep; several processes keep round-robin (the kernel's spread between
 * processes accepting for themselves is uneven). NODE_CLUSTER_SCHED_POLICY, when set, decides.
 */
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';

/**
 * net.core.somaxconn at or above which one web process accepts for itself: a choice, not a
 * measured edge (20 000 users in a second overflowed 4 096 and never 65 535).
 */
export const DEEP_LISTEN_QUEUE = 16_384;

export type AcceptPolicy = 'none' | 'rr';

export function acceptPolicy(processes: number, explicit: string | undefined, listenQueue: number | null): AcceptPolicy {
  if (explicit === 'none' || explicit === 'rr') return explicit;
  return processes === 1 && listenQueue !== null && listenQueue >= DEEP_LISTEN_QUEUE ? 'none' : 'rr';
}

/**
 * In a cluster primary, before its first fork: sets node:cluster's scheduling to the policy for
 * `processes` on this host (NODE_CLUSTER_SCHED_POLICY, or the rule above) and returns it.
 */
export function applyAcceptPolicy(processes: number): AcceptPolicy {
  const policy = acceptPolicyHere(processes);
  cluster.schedulingPolicy = policy === 'none' ? cluster.SCHED_NONE : cluster.SCHED_RR;
  return policy;
}

/** The policy for `processes` on this host: NODE_CLUSTER_SCHED_POLICY, or the rule above over this kernel's queue. */
export function acceptPolicyHere(processes: number): AcceptPolicy {
  return acceptPolicy(processes, process.env.NODE_CLUSTER_SCHED_POLICY, kernelListenQueue());
}

/** The kernel's cap on a listen queue (net.core.somaxconn), or null where it cannot be read (not Linux). */
export function kernelListenQueue(file = '/proc/sys/net/core/somaxconn'): number | null {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isSafeInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}
