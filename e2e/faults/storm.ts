/**
 * An open-loop grab storm: a fixed offered rate spread round-robin over the live web instances,
 * every user trying twice. Records every accepted order id with the phase it was
 * accepted in, and the status mix.
 */
export interface StormUser {
  id: string;
  token: string;
}

export class Storm {
  readonly accepted = new Map<string, { phase: string; userId: string }>();
  /** Every 200 in arrival order, even when an order id or a user repeats (a failover can cause both). */
  readonly answers: { orderId: string; userId: string; phase: string; at: number; target: string }[] = [];
  readonly statuses = new Map<string, number>();
  /** The status mix per phase and target: `${phase} ${target}` → status → count. */
  readonly statusesBy = new Map<string, Map<string, number>>();
  phase = 'setup';
  private next = 0;
  private inFlight = 0;
  private timer?: NodeJS.Timeout;
  private rr = 0;

  /** Request i goes to user ⌊i/2⌋: each user grabs twice back to back, the second must be refused. */
  constructor(
    private readonly targets: () => string[],
    readonly users: StormUser[],
    private readonly voucherId: string,
    private readonly ratePerSecond: number,
    private readonly maxInFlight = 300,
  ) {}

  get sent(): number {
    return this.next;
  }

  run(phase: string): void {
    this.phase = phase;
    if (this.timer) return;
    const tick = 20;
    const perTick = this.ratePerSecond * (tick / 1000);
    let credit = 0;
    this.timer = setInterval(() => {
      credit += perTick;
      while (credit >= 1) {
        credit -= 1;
        if (this.inFlight < this.maxInFlight) void this.fire();
      }
    }, tick);
  }

  pause(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  async drain(): Promise<void> {
    this.pause();
    while (this.inFlight > 0) await new Promise((r) => setTimeout(r, 50));
  }

  private count(key: string, phase: string, target: string) {
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
    const by = this.statusesBy.get(`${phase} ${target}`) ?? new Map<string, number>();
    by.set(key, (by.get(key) ?? 0) + 1);
    this.statusesBy.set(`${phase} ${target}`, by);
  }

  private async fire(): Promise<void> {
    const targets = this.targets();
    const user = this.users[Math.floor(this.next++ / 2) % this.users.length]!;
    const base = targets[this.rr++ % targets.length]!;
    const phase = this.phase;
    this.inFlight++;
    try {
      const res = await fetch(`${base}/api/seckill/${this.voucherId}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${user.token}` },
        signal: AbortSignal.timeout(5000),
      });
      const body = (await res.json().catch(() => null)) as { data?: { orderId?: string }; error?: { code?: string } } | null;
      this.count(res.ok ? 'accepted' : `${res.status} ${body?.error?.code ?? ''}`.trim(), phase, base);
      if (res.ok && body?.data?.orderId) {
        this.accepted.set(body.data.orderId, { phase, userId: user.id });
        this.answers.push({ orderId: body.data.orderId, userId: user.id, phase, at: Date.now(), target: base });
      }
    } catch (e) {
      this.count(`no answer (${(e as Error).name})`, phase, base);
    } finally {
      this.inFlight--;
    }
  }
}
