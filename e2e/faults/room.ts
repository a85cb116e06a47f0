/**
 * npm run test:faults:room — a waiting room through faults (issue #25): two web instances and a
 * worker on private MariaDB, Redis (AOF always) and RabbitMQ; a merchant's room sale with stock S
 * and many more users, each running the real room flow over HTTP (join → look until admitted or
 * sold out → challenge → solve → token → grab with the token's URL), retrying 503s and connection
 * errors with jitter, re-joining when its place is gone, asking for a fresh token when one is
 * refused. In the middle of the room (users waiting, some admitted) Redis is SIGKILLed and
 * restarted; later, still with people waiting, one web instance is SIGKILLed (its users move to the
 * other). A few bots grab without a token or with a forged one all along. Every other visitor
 * buys on admission instead (docs/fair-sale.md#buying-on-admission): the gate's solution handed in
 * with a join that asks to buy and waits, then looks with `buy=1` until the purchase, so their grabs
 * go in turn, parked in Redis behind the places ahead (docs/fair-sale.md#in-turn), through both faults.
 *
 * Requires: every user ends won or sold out, the stock sold out exactly, oversold = duplicates =
 * lost = 0 against MySQL, the queue and the outbox drained, every flash-sale invariant
 * (lib/seckill/invariants.ts), no bot win, no replayed token win, no 5xx but 503 (503s are counted
 * per window, route and message: in the fault windows, and load shedding outside them). The proof of work costs little here (powCost 1 000, ~25 ms to solve) so
 * the clients' CPU goes to the run, not to hashing.
 *
 *   npm run test:faults:room              full size
 *   npx tsx e2e/faults/room.ts --ci       the size npm test runs
 *   … --fsync off                         the Redis restart forgets the whole room (default: AOF always)
 *   FAULT_PORT_BASE=3650 …                private ports (e2e/faults/procs.ts faultPorts)
 */
import { solveChallenge } from 'altcha-lib';
import { PrivateMariaDb, PrivateRabbit, PrivateRedis } from './private-services';
import { faultPorts, runToExit, sleep, waitFor } from './procs';
import { Cluster } from './cluster';
import { createSale } from './sale';
import { faultEnv, openStores } from './env';
import type { StormUser } from './storm';

const ci = process.argv.includes('--ci');
/** `--fsync off` (or everysec): the restarted Redis comes back without (some of) the room — tickets, gate, spent nonces, sessions. */
const fsyncArg = process.argv.indexOf('--fsync');
const FSYNC = (fsyncArg > 0 ? process.argv[fsyncArg + 1] : 'always') as 'always' | 'everysec' | 'off';
if (!['always', 'everysec', 'off'].includes(FSYNC)) throw new Error('--fsync always|everysec|off');
const USERS = ci ? 160 : 600;
const STOCK = ci ? 60 : 240;
const BOTS = 4;
/** How long a look waits in the server for admission or the sell-out (a long poll, as the page asks). */
const LOOK_WAIT_MS = 2000;
/** The serving counter's rate (ROOM_ADMIT_MAX_PER_SECOND): slow, so the room still has people waiting at both faults. */
const ADMIT_PER_S = ci ? 3 : 8;
const POW_COST = 1000;
/** Faults when the sale's buyers reach these fractions of the stock. */
const FAULT1_AT = 0.2;
const FAULT2_AT = 0.65;
/** A fault window: from the kill until this long after the service (or the survivor) answers again. */
const WINDOW_TAIL_MS = 5000;
const USER_DEADLINE_MS = ci ? 150_000 : 300_000;

const ports = faultPorts(30, { mysql: 3485, redis: 6485, rabbit: 5685, webs: [3285, 3286] });
const [WEB1, WEB2] = ports.webs as [number, number];
const mysql = new PrivateMariaDb(ports.mysql);
const redisSrv = new PrivateRedis(ports.redis, FSYNC);
const rabbit = new PrivateRabbit(ports.rabbit, ports.rabbitDist);

const t0 = Date.now();
const log = (msg: string) => console.log(`[room-faults ${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${msg}`);
const jitter = (ms: number) => ms / 2 + Math.random() * ms;

/** `unsure`: a buyer on admission whose buy went unanswered (it may have bought) and then heard 已抢光: they look at their orders once the queue drained. */
type Final = 'won' | 'won-unseen' | 'soldout' | 'unsure' | 'hanging' | 'error';
interface Visitor {
  user: StormUser;
  web: number;
  /** Buys on admission (join `{ altcha, buy, wait }`, looks with `buy=1`) instead of the token route. */
  buys: boolean;
  state: 'joining' | 'waiting' | 'admitted' | 'grabbing' | 'done';
  final?: Final;
  orderIds: string[];
  usedTokens: string[];
  /** A grab sent that got no answer (connection cut, timeout): it may have been accepted. */
  unanswered: number;
  rejoins: number;
  freshTokens: number;
  moved: number;
  why?: string;
}

/** The fields the room's routes and the grab answer with (what this client reads of them). */
interface ReplyData {
  state?: string;
  ticket?: string;
  estimateMs?: number;
  token?: string;
  grabUrl?: string;
  orderId?: string;
  purchase?: { orderId?: string };
}
interface Reply {
  status: number | 'conn';
  code?: string;
  data?: ReplyData;
  raw?: unknown;
}

/** Statuses per window: `${window} ${status}` → count. */
const statuses = new Map<string, number>();
let window = 'before';
const faultWindows: string[] = [];
const count = (key: string) => statuses.set(`${window}|${key}`, (statuses.get(`${window}|${key}`) ?? 0) + 1);

async function main(): Promise<number> {
  log(`private MariaDB, Redis (${FSYNC === 'off' ? 'no persistence' : `AOF ${FSYNC}`}), RabbitMQ; ${USERS} users + ${BOTS} bots, stock ${STOCK}, admission ${ADMIT_PER_S}/s, powCost ${POW_COST}`);
  await Promise.all([mysql.start(), redisSrv.start(), rabbit.start()]);
  const env = faultEnv({ mysql: mysql.url, redis: redisSrv.url, rabbit: rabbit.url }, 'hmdp_roomfault', {
    REDIS_CLUSTER_NODES: '',
    ORDER_RETRY_BASE_MS: '500',
    ROOM_ADMIT_MAX_PER_SECOND: String(ADMIT_PER_S),
  });
  const { db, redis } = await openStores(env);
  const { checkInvariants } = await import('@/lib/seckill/invariants');
  const { readSeckillState } = await import('@/lib/seckill/state');
  const { createSession } = await import('@/lib/auth/session');
  const { keys } = await import('@/lib/redis/keys');

  const { voucherId, users } = await createSale(db, redis, USERS + BOTS, '1577', 1, STOCK, { powCost: POW_COST });
  const bots = users.splice(USERS, BOTS);
  log(`room sale ${voucherId}: stock ${STOCK}`);

  const cluster = new Cluster(env, [WEB1, WEB2], 1);
  await cluster.start();
  log('2 web instances and 1 worker up');
  const url = (port: number) => cluster.url(port);
  const other = (port: number) => (port === WEB1 ? WEB2 : WEB1);

  /** One HTTP call as a client makes it: the status and the error code, or 'conn' when no answer came. */
  async function call(v: Visitor | { user: StormUser; web: number }, method: string, path: string, body?: unknown): Promise<Reply> {
    try {
      const res = await fetch(`${url(v.web)}${path}`, {
        method,
        headers: { authorization: `Bearer ${v.user.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(8000),
      });
      const json = (await res.json().catch(() => null)) as { data?: ReplyData; error?: { code?: string; message?: string } } | null;
      const code = json?.error?.code;
      // 5xx also by route and message: which door answered it, and why.
      const where = res.status >= 500 ? ` (${method} ${path.replace(/[?].*/, '').replace(`/api/seckill/${voucherId}`, '…')}: ${json?.error?.message ?? ''})` : '';
      count(`${res.status}${code ? ` ${code}` : ''}${where}`);
      if (res.status === 401) v.user.token = await createSession(redis, { id: v.user.id, nickName: 'visitor', icon: '', role: 'user' });
      return { status: res.status, code, data: json?.data, raw: json };
    } catch {
      count('no answer');
      return { status: 'conn' };
    }
  }

  async function solve(v: Visitor): Promise<string | null> {
    const c = await call(v, 'GET', `/api/seckill/${voucherId}/room/challenge`);
    if (c.status !== 200 || !c.raw) return null;
    const ch = c.raw as { algorithm: string; challenge: string; salt: string; signature: string; maxnumber: number };
    const s = await solveChallenge(ch.challenge, ch.salt, ch.algorithm, ch.maxnumber).promise;
    if (!s) return null;
    return Buffer.from(JSON.stringify({ algorithm: ch.algorithm, challenge: ch.challenge, number: s.number, salt: ch.salt, signature: ch.signature })).toString('base64');
  }

  const deadline = Date.now() + USER_DEADLINE_MS;
  async function visit(v: Visitor): Promise<void> {
    let ticket: string | null = null;
    let passedGate = false;
    let failures = 0;
    const finish = (f: Final, why?: string) => {
      v.final = f;
      v.state = 'done';
      v.why = why;
    };
    /** A 503, a cut connection or a 502: back off with jitter; on a cut connection try the other instance. */
    const retry = async (status: number | 'conn') => {
      failures++;
      if (status === 'conn') {
        v.web = other(v.web);
        v.moved++;
      }
      await sleep(jitter(Math.min(4000, 200 * 2 ** Math.min(failures, 4))));
    };
    const unexpected = (what: string, r: { status: number | 'conn'; code?: string }) => finish('error', `${what}: ${r.status} ${r.code ?? ''}`);

    await sleep(Math.random() * 3000); // arrivals spread over 3 s
    while (v.state !== 'done') {
      if (Date.now() > deadline) return finish('hanging', `still ${v.state}`);
      if (v.buys && ticket) {
        // Buying on admission: the solution with a join that asks to buy and waits, then looks
        // with buy=1; the answer that finds the turn is the purchase.
        const altcha = passedGate ? undefined : await solve(v);
        const asked = Date.now();
        const r = altcha
          ? await call(v, 'POST', `/api/seckill/${voucherId}/room`, { altcha, buy: true, wait: LOOK_WAIT_MS })
          : await call(v, 'GET', `/api/seckill/${voucherId}/room?wait=${LOOK_WAIT_MS}&buy=1`);
        if (r.status === 200) {
          failures = 0;
          if (altcha) passedGate = true;
          const bought = r.data?.purchase?.orderId;
          if (bought) {
            v.orderIds.push(bought);
            return finish('won');
          }
          const st = r.data?.state;
          if (st === 'soldout') return finish(v.unanswered ? 'unsure' : 'soldout');
          if (st === 'none') {
            ticket = null;
            v.rejoins++;
          } else if (st === 'admitted') {
            // Admitted and asked to buy, but no purchase: the gate is not passed (a Redis that lost it).
            v.state = 'admitted';
            passedGate = false;
          } else {
            v.state = 'waiting';
            // Answered before its wait ran out while still waiting (the server held no more): wait the rest.
            await sleep(Math.max(0, LOOK_WAIT_MS - (Date.now() - asked)));
          }
        } else if (r.code === 'ALREADY_BOUGHT') return v.unanswered ? finish('won-unseen') : unexpected('buy (bought without a 200)', r);
        else if (r.code === 'SOLD_OUT') return finish(v.unanswered ? 'unsure' : 'soldout');
        else if (r.code === 'POW_FAILED') {
          if (altcha) return unexpected('buy', r);
          passedGate = false; // the gate forgot this user (a Redis that lost it): solve again
        } else if (r.code === 'NEED_TICKET' || r.code === 'TOKEN_USED') {
          ticket = null;
          v.rejoins++;
        } else if (r.status === 'conn' || r.status === 503 || r.status === 401) {
          // A buy with no answer, or a 503 whose grab may have run: an ALREADY_BOUGHT later is this one's.
          if (r.status !== 401) v.unanswered++;
          await retry(r.status);
        } else return unexpected('buy', r);
        continue;
      }
      if (!ticket) {
        v.state = 'joining';
        const j = await call(v, 'POST', `/api/seckill/${voucherId}/room`, v.buys ? { buy: true } : undefined);
        if (j.status === 200) {
          ticket = j.data?.ticket ?? null;
          failures = 0;
          if (j.data?.state === 'soldout') return finish(v.unanswered ? 'won-unseen' : 'soldout');
          v.state = j.data?.state === 'admitted' ? 'admitted' : 'waiting';
        } else if (j.status === 'conn' || j.status === 503 || j.status === 401) await retry(j.status);
        else return unexpected('join', j);
        continue;
      }
      if (v.state === 'waiting') {
        const asked = Date.now();
        const l = await call(v, 'GET', `/api/seckill/${voucherId}/room?wait=${LOOK_WAIT_MS}`);
        if (l.status === 200) {
          failures = 0;
          const st = l.data?.state;
          if (st === 'soldout') return finish(v.unanswered ? 'won-unseen' : 'soldout');
          if (st === 'none') {
            // The room forgot this place (a Redis that lost it): join again, a new place.
            ticket = null;
            v.rejoins++;
            continue;
          }
          if (st === 'admitted') v.state = 'admitted';
          // A look the server held answers when the wait ran out: look again at once; one it answered early (it held no more) waits the rest.
          else await sleep(Math.max(0, LOOK_WAIT_MS - (Date.now() - asked)));
        } else if (l.status === 'conn' || l.status === 503 || l.status === 401) await retry(l.status);
        else return unexpected('look', l);
        continue;
      }
      // Admitted: a token (the gate solved once), then the grab with the token's URL.
      const altcha = passedGate ? undefined : await solve(v);
      const t = await call(v, 'POST', `/api/seckill/${voucherId}/room/token`, altcha ? { ticket, altcha } : { ticket });
      if (t.status === 200) {
        passedGate = true;
        failures = 0;
      } else if (t.code === 'SOLD_OUT') return finish(v.unanswered ? 'won-unseen' : 'soldout');
      else if (t.code === 'POW_FAILED') {
        passedGate = false; // the gate forgot this user (or the solution failed): solve again
        if (!altcha) continue;
        return unexpected('token', t);
      } else if (t.code === 'NOT_ADMITTED') {
        v.state = 'waiting';
        continue;
      } else if (t.code === 'NEED_TICKET') {
        ticket = null;
        v.rejoins++;
        continue;
      } else if (t.status === 'conn' || t.status === 503 || t.status === 401) {
        await retry(t.status);
        continue;
      } else return unexpected('token', t);

      v.state = 'grabbing';
      v.usedTokens.push(t.data!.token!);
      const g = await call(v, 'POST', t.data!.grabUrl!);
      v.state = 'admitted';
      if (g.status === 200 && g.data?.orderId) {
        v.orderIds.push(g.data.orderId);
        return finish('won');
      }
      if (g.code === 'ALREADY_BOUGHT') return v.unanswered ? finish('won-unseen') : unexpected('grab (bought without a 200)', g);
      if (g.code === 'SOLD_OUT') return finish(v.unanswered ? 'won-unseen' : 'soldout');
      if (g.code === 'TOKEN_USED' || g.code === 'NEED_TICKET') {
        v.freshTokens++; // a token refused after a fault: ask for a fresh one
        continue;
      }
      if (g.status === 'conn' || g.status === 503 || g.status === 401) {
        if (g.status === 'conn') v.unanswered++;
        v.freshTokens++;
        await retry(g.status);
        continue;
      }
      return unexpected('grab', g);
    }
  }

  // Bots: grab with no token and with a forged one, all along. Any 200 is a failure.
  let botWins = 0;
  let botTries = 0;
  let stopBots = false;
  const botRuns = bots.map(async (user, i) => {
    const b = { user, web: i % 2 ? WEB2 : WEB1 };
    while (!stopBots) {
      for (const q of ['', `?g=g2.${voucherId}.${user.id}..AAAAAAAAAAAAAAAA.${Date.now() + 60_000}.forged`]) {
        const r = await call(b, 'POST', `/api/seckill/${voucherId}${q}`);
        botTries++;
        if (r.status === 200) botWins++;
        if (r.status === 'conn') b.web = other(b.web);
      }
      await sleep(jitter(400));
    }
  });

  const visitors: Visitor[] = users.map((user, i) => ({ user, web: i % 2 ? WEB2 : WEB1, buys: i % 4 >= 2, state: 'joining', orderIds: [], usedTokens: [], unanswered: 0, rejoins: 0, freshTokens: 0, moved: 0 }));
  const runs = Promise.all(visitors.map((v) => visit(v)));
  const buyers = async () => (await readSeckillState(redis, voucherId))?.buyers ?? 0;
  const snapshot = () => {
    const by = (s: string) => visitors.filter((v) => v.state === s).length;
    return { waiting: by('waiting'), admitted: by('admitted') + by('grabbing'), done: by('done') };
  };
  const atFault: { fault: string; buyers: number; waiting: number; admitted: number; done: number; windowS: number }[] = [];

  try {
    // Fault 1: Redis SIGKILLed and restarted (AOF always) with people waiting and some admitted.
    // Each fault waits for its point of the sale, or for every visitor to have finished (a broken
    // room: the run then goes straight to the verdict, which fails it).
    const allDone = () => visitors.every((v) => v.state === 'done');
    await waitFor('buyers for fault 1', async () => allDone() || (await buyers()) >= STOCK * FAULT1_AT, 120_000, 100);
    const f1 = { fault: 'Redis SIGKILL + restart', buyers: await buyers(), ...snapshot(), windowS: 0 };
    window = 'redis-fault';
    faultWindows.push(window);
    const w1 = Date.now();
    log(`fault 1: Redis SIGKILL (buyers ${f1.buyers}, waiting ${f1.waiting}, admitted ${f1.admitted}, done ${f1.done})`);
    await redisSrv.crash();
    await sleep(1000);
    await redisSrv.start();
    await waitFor('web sees Redis again', async () => (await fetch(`${url(WEB1)}/api/health`)).ok, 30_000);
    log('  Redis back; web healthy');
    await sleep(WINDOW_TAIL_MS);
    f1.windowS = (Date.now() - w1) / 1000;
    atFault.push(f1);
    window = 'between';

    // Fault 2: one web instance SIGKILLed, still with people waiting. It stays down: its users move.
    await waitFor('buyers for fault 2', async () => allDone() || (await buyers()) >= STOCK * FAULT2_AT, 120_000, 100);
    const f2 = { fault: `web instance :${WEB2} SIGKILL`, buyers: await buyers(), ...snapshot(), windowS: 0 };
    window = 'web-fault';
    faultWindows.push(window);
    const w2 = Date.now();
    log(`fault 2: SIGKILL web :${WEB2} (buyers ${f2.buyers}, waiting ${f2.waiting}, admitted ${f2.admitted}, done ${f2.done})`);
    await cluster.killWeb(WEB2);
    await sleep(WINDOW_TAIL_MS);
    f2.windowS = (Date.now() - w2) / 1000;
    atFault.push(f2);
    window = 'after';

    await runs;
    log(`every visitor finished: ${snapshot().done} done`);
    // Replays: every winner's used token once more (a token minted before a fault must not buy twice).
    let replayWins = 0;
    let replays = 0;
    for (const v of visitors.filter((x) => x.final === 'won')) {
      for (const tok of v.usedTokens) {
        replays++;
        const c = { user: v.user, web: WEB1 };
        let r = await call(c, 'POST', `/api/seckill/${voucherId}?g=${tok}`);
        if (r.status === 401) r = await call(c, 'POST', `/api/seckill/${voucherId}?g=${tok}`); // a Redis that forgot the session: logged in again
        if (r.status === 200) replayWins++;
      }
    }
    stopBots = true;
    await Promise.all(botRuns);

    // Drained: nothing pending in Redis, the orders queue empty, the outbox sent; then the invariants.
    const { names } = await import('@/lib/mq/topology');
    const amqp = await import('amqplib');
    const conn = await amqp.connect(rabbit.url);
    const ch = await conn.createChannel();
    const queueName = names.ordersQueue;
    let queued = -1;
    let outbox = -1;
    const drained = await waitFor('drained', async () => {
      const s = await readSeckillState(redis, voucherId);
      queued = (await ch.checkQueue(queueName)).messageCount;
      outbox = s?.pending ?? -1; // the outbox entries of grabs not yet in MySQL (docs/flash-sale.md#the-outbox-sweeper)
      return outbox === 0 && queued === 0;
    }, 90_000, 500).then(() => true, () => false);
    await conn.close();
    // A buyer who never heard how their buy ended looks at their orders, as a person would.
    for (const v of visitors.filter((x) => x.final === 'unsure')) {
      let r = await call({ user: v.user, web: WEB1 }, 'GET', '/api/orders?size=50');
      if (r.status === 401) r = await call({ user: v.user, web: WEB1 }, 'GET', '/api/orders?size=50');
      const items = (r.raw as { data?: { items?: { voucherId: string }[] } } | null)?.data?.items;
      if (items) v.final = items.some((o) => o.voucherId === voucherId) ? 'won-unseen' : 'soldout';
    }
    const inv = await checkInvariants(db, redis, voucherId, { drained: true });
    const deadLetters = Number((await db.selectFrom('tb_order_dead_letter').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

    const orders = await db.selectFrom('tb_voucher_order').select(['id', 'user_id']).where('voucher_id', '=', voucherId).execute();
    const orderIds = new Set(orders.map((o) => o.id));
    const orderUsers = new Set(orders.map((o) => o.user_id));
    const answered = visitors.flatMap((v) => v.orderIds);
    const lost = answered.filter((id) => !orderIds.has(id)).length;
    const perUser = new Map<string, number>();
    for (const o of orders) perUser.set(o.user_id, (perUser.get(o.user_id) ?? 0) + 1);
    const duplicates = [...perUser.values()].filter((n) => n > 1).length + visitors.filter((v) => v.orderIds.length > 1).length;
    const oversold = Math.max(0, orders.length - STOCK) + (inv.redisStock < 0 ? 1 : 0) + (inv.dbStock < 0 ? 1 : 0);
    const finals = new Map<string, number>();
    for (const v of visitors) finals.set(v.final ?? 'none', (finals.get(v.final ?? 'none') ?? 0) + 1);
    const winners = visitors.filter((v) => v.final === 'won' || v.final === 'won-unseen');
    const winnersWithoutOrder = winners.filter((v) => !orderUsers.has(v.user.id)).length;
    const soldOutWithOrder = visitors.filter((v) => v.final === 'soldout' && orderUsers.has(v.user.id)).length;
    const botIds = new Set(bots.map((b) => b.id));
    const botOrders = orders.filter((o) => botIds.has(o.user_id)).length;
    const bad5xx = [...statuses].filter(([k]) => /\|5\d\d/.test(k) && !/\|503/.test(k)).reduce((a, [, n]) => a + n, 0);
    const out503 = [...statuses].filter(([k]) => /\|503/.test(k) && !faultWindows.includes(k.split('|')[0]!)).reduce((a, [, n]) => a + n, 0);
    const sum = (f: (v: Visitor) => number) => visitors.reduce((a, v) => a + f(v), 0);
    const redisSpent = await redis.exists(keys.seckillMeta(voucherId));

    console.log('\n| fault | buyers at the fault | waiting | admitted | finished | window |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const f of atFault) console.log(`| ${f.fault} | ${f.buyers} | ${f.waiting} | ${f.admitted} | ${f.done} | ${f.windowS.toFixed(1)} s |`);
    console.log('\nstatuses per window:');
    for (const w of ['before', 'redis-fault', 'between', 'web-fault', 'after']) {
      const row = [...statuses].filter(([k]) => k.startsWith(`${w}|`)).map(([k, n]) => `${k.slice(w.length + 1)} ${n}`).join(', ');
      console.log(`  ${w}: ${row || '—'}`);
    }
    console.log(`\nvisitors: ${[...finals].map(([k, n]) => `${k} ${n}`).join(', ')}; re-joins ${sum((v) => v.rejoins)}, fresh tokens ${sum((v) => v.freshTokens)}, moved to the other instance ${sum((v) => v.moved)}, grabs without an answer ${sum((v) => v.unanswered)}; bought on admission ${visitors.filter((v) => v.buys && v.final?.startsWith('won')).length} of ${visitors.filter((v) => v.final?.startsWith('won')).length} winners`);
    for (const v of visitors.filter((x) => x.final === 'error' || x.final === 'hanging').slice(0, 10)) console.log(`  user ${v.user.id}: ${v.final} (${v.why})`);
    console.log(`bots: ${botTries} grabs without a real token, ${botWins} answered 200, ${botOrders} orders; replayed used tokens: ${replays}, ${replayWins} answered 200`);
    console.log(`final: stock ${STOCK}, db orders ${orders.length}, db stock ${inv.dbStock}, redis stock ${inv.redisStock}, buyers ${inv.buyers}, pending ${inv.pending}, queue ${queued}, outbox ${outbox}, dead letters ${deadLetters} (meta ${redisSpent ? 'present' : 'absent'})`);
    console.log(`oversold ${oversold} · duplicates ${duplicates} · lost ${lost} · winners without an order ${winnersWithoutOrder} · sold-out answers to buyers ${soldOutWithOrder} · 5xx other than 503 ${bad5xx} · 503 outside the fault windows ${out503}`);
    if (inv.violations.length) console.log(`invariants: ${inv.violations.join('; ')}`);

    const checks: [string, boolean][] = [
      ['every visitor has a final answer (won / sold out)', (finals.get('won') ?? 0) + (finals.get('won-unseen') ?? 0) + (finals.get('soldout') ?? 0) === USERS],
      ['sold out exactly', orders.length === STOCK && inv.redisStock === 0 && inv.dbStock === 0],
      ['oversold = 0', oversold === 0],
      ['duplicates = 0', duplicates === 0],
      ['lost = 0', lost === 0],
      ['every winner has its order, no sold-out answer to a buyer', winnersWithoutOrder === 0 && soldOutWithOrder === 0 && winners.length === orders.length],
      ['queue and outbox drained, no dead letter', drained && deadLetters === 0],
      ['flash-sale invariants', inv.violations.length === 0],
      ['no bot and no replayed token wins', botWins === 0 && botOrders === 0 && replayWins === 0 && botTries > 0],
      // A 503 outside the fault windows is the hot server shedding load (the client retries it), reported, not failed.
      ['no 5xx but 503', bad5xx === 0],
      ['both faults mid-room: people waiting, stock left', atFault.length === 2 && atFault.every((f) => f.waiting > 0 && f.buyers < STOCK)],
    ];
    for (const [name, ok] of checks) console.log(`${ok ? 'PASS' : 'FAIL'}  ${name}`);
    const failed = checks.filter(([, ok]) => !ok).length;
    console.log(`\nroom faults: ${failed ? 'FAIL' : 'PASS'} (${checks.length - failed}/${checks.length} checks, ${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    return failed ? 1 : 0;
  } finally {
    stopBots = true;
    await cluster.stop();
    redis.disconnect();
    await db.destroy();
  }
}

runToExit(main, () => Promise.allSettled([mysql.stop(), redisSrv.stop(), rabbit.stop()]));
