/**
 * The one reader of process.env. Every setting is parsed and typed here; a bad value fails fast
 * with a message naming the variable. Local files (.env, .env.local) are loaded the same way
 * Next.js loads them, so the web server, the worker and the scripts agree.
 */
import nextEnv from '@next/env';
import { z } from 'zod';

nextEnv.loadEnvConfig(process.cwd(), process.env.NODE_ENV !== 'production', { info: () => {}, error: console.error });

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'])
  .transform((v) => ['true', '1', 'yes', 'on'].includes(v));
const int = (def: number) => z.coerce.number().int().nonnegative().default(def);

const schema = z.object({
  // ── runtime ──
  /** development / test / production (`npm run up` runs production). */
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  /** The web server's port. */
  PORT: z.coerce.number().int().positive().default(3000),
  /** Address the servers listen on; anything but loopback is refused while demo credentials remain (lib/seed/listen-guard.ts). */
  HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * Web server processes (node:cluster workers); 0 = one per core. Default 1, measured on the
   * 2-core box shared with Redis, RabbitMQ, MySQL and the worker (docs/hot-server.md#how-many-processes): two
   * processes answer a sold-out storm 35-50 % faster but no more accepted grabs, and put the
   * open-loop p99 at 5 000 req/s at 24-53 ms (median 47) against 8-33 ms (median 13) with one.
   */
  WEB_CONCURRENCY: int(1),
  /**
   * `split` (the default): one port, the hot routes in the web processes and Next in one process of
   * its own behind them, over a unix socket (docs/hot-server.md#the-split-server); `all`: hot routes
   * + Next in each web process on one port (shape (a)); `hot`: the hot routes only, Next never
   * loaded (shape (b), behind a front).
   */
  WEB_PART: z.enum(['all', 'hot', 'split']).default('split'),
  /**
   * Hot-route requests one web process serves at once; above it they are shed with 503 + Retry-After.
   * A request counts once it is complete and its caller passed auth (lib/hot/server.ts).
   * 2048 (measured, docs/hot-server.md#shedding): a spike of 1000 connections, each holding one request, was shed 6 942
   * times at 512 and answered whole, none 5xx, within 6 s at 2048. With HOT_ADMISSION=adaptive, the adaptive limit's ceiling and where it starts (a first burst is served as the fixed limit would).
   */
  HOT_MAX_IN_FLIGHT: int(2048),
  /**
   * How the hot server's in-flight limit is set (docs/hot-server.md#adaptive-admission). `fixed`:
   * HOT_MAX_IN_FLIGHT. `adaptive`: follows the admitted requests' measured service time (gradient
   * style), between HOT_MIN_IN_FLIGHT and HOT_MAX_IN_FLIGHT, so a fast or a slow host serves what
   * it can with flat latency and sheds the rest, without tuning; the waiting room admits at the rate
   * it measures. Default adaptive: the real-grab proof (e2e/routes/hot/adaptive-grab.test.ts, in
   * npm test: C measured past the knee, load tripled) is its evidence.
   */
  HOT_ADMISSION: z.enum(['adaptive', 'fixed']).default('adaptive'),
  /** The adaptive limit's floor per process (HOT_ADMISSION=adaptive). */
  HOT_MIN_IN_FLIGHT: z.coerce.number().int().positive().default(8),
  /**
   * A connection whose first request a hot route knows the answer to (a sold-out sale's crowd) is
   * answered from its first read, before node:http parses it (lib/hot/known-door.ts,
   * docs/hot-server.md#the-known-answer-door). false: node:http reads every request.
   */
  HOT_KNOWN_DOOR: bool.default(true),
  /** A file the adaptive limit appends one JSON line per window to (what it measured, what it did): a diagnosis aid, unset by default. */
  HOT_ADMISSION_TRACE: z.string().optional(),
  /**
   * The web server's deadlines, for every request on either door (hot routes and Next): its
   * headers must arrive within WEB_HEADERS_TIMEOUT_MS of the connection or of the previous
   * request, the whole request (headers and body) within WEB_REQUEST_TIMEOUT_MS, else 408 and the
   * connection is closed. 0 = node's own (60 s).
   */
  WEB_HEADERS_TIMEOUT_MS: int(10_000),
  /** The whole request (headers and body) must arrive within this, else 408 and close; 30 s carries a 5 MB upload at 1.4 Mbit/s. 0 = node's own (300 s). */
  WEB_REQUEST_TIMEOUT_MS: int(30_000),
  /**
   * Open connections one client address (an IPv6 /64) may hold per web process; a connection
   * past it is closed at once. Trusted proxies (TRUSTED_PROXIES) are exempt. 0 = no cap.
   */
  WEB_MAX_CONNECTIONS_PER_CLIENT: int(256),
  /**
   * A web process accepting for itself (one process over a deep kernel queue, workers/accept-policy.ts)
   * takes in up to this many new connections per turn of its event loop; libuv takes one per
   * listening handle per turn, so the process listens on this many handles of its one socket
   * (workers/listen-copies.ts, docs/hot-server.md#more-than-one-accept-per-turn). 1 = node's own.
   */
  WEB_ACCEPTS_PER_TURN: z.coerce.number().int().min(1).max(65).default(16),
  /** Port of the web server's Prometheus /metrics and /grab-rate (hot routes, summed over its processes), read by the console's live grab rate; 0 = off (`npm run up` on loopback sets 9465). A sale's grab counts on the live page need no port: Next's process asks the primary (lib/hot/primary-metrics.ts). */
  WEB_METRICS_PORT: int(0),
  /** The Redis commands of one event-loop turn leave in one socket write (lib/redis/write-per-turn.ts, not ioredis' own auto-pipelining); the web server turns it on for its own processes (not the worker). */
  REDIS_AUTO_PIPELINING: bool.default(false),
  /** Public URL, e.g. https://hmdp.example.com, when behind a proxy. */
  APP_URL: z.string().url().optional(),
  /** Which X-Forwarded-For entry is the client: empty = none (the socket), a hop count, or CIDRs (lib/http/client-ip.ts). */
  TRUSTED_PROXIES: z.string().default(''),
  /** fatal / error / warn / info / debug / trace / silent. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  // ── services ──
  /** MySQL / MariaDB. */
  DATABASE_URL: z.string().url().default('mysql://root@127.0.0.1:3306/hmdp'),
  /** MySQL connections per process. */
  DB_POOL_SIZE: int(20),
  /** The one Redis (unused when REDIS_CLUSTER_NODES is set). */
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379/0'),
  /**
   * Where the product's own locks live (cache rebuild, voucher console, GEO index; docs/locks.md#choosing-the-backend):
   * `redis` = the one Redis (or the cluster), `redlock` = a majority of REDIS_URL + REDLOCK_NODES
   * (at least 3 nodes), `zookeeper` = the ensemble at ZOOKEEPER_CONNECT. Checked at start.
   */
  LOCK_BACKEND: z.enum(['redis', 'redlock', 'zookeeper']).default('redis'),
  /** Extra independent Redis nodes for the multi-node (redlock) lock, comma separated. */
  REDLOCK_NODES: z
    .string()
    .default('')
    .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean)),
  /** ZooKeeper for the `nodes: 'zookeeper'` lock (host:port, comma separated); empty = that lock is unavailable. */
  ZOOKEEPER_CONNECT: z.string().default(''),
  /** Session timeout asked of ZooKeeper: how long a dead holder keeps a ZooKeeper lock. */
  ZOOKEEPER_SESSION_TIMEOUT_MS: int(10_000),
  /** Redis Cluster seed nodes (host:port, comma separated); when set, every Redis user talks to the cluster and REDIS_URL is unused. */
  REDIS_CLUSTER_NODES: z
    .string()
    .default('')
    .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean)),
  /**
   * A Redis command (the grab script among them) not answered within this many ms fails instead of
   * waiting on a link that was cut (docs/redis-cluster.md#commands-time-out); 0 = wait forever. The
   * clients take at least SECKILL_REPLICA_WAIT_MS + 500 (the grab's WAIT must not time out first).
   */
  REDIS_COMMAND_TIMEOUT_MS: int(1000),
  /** Redis Cluster: how often the client re-reads the slot map, so a promoted replica is found while the old master's link hangs; 0 = only on MOVED/errors. */
  REDIS_SLOTS_REFRESH_INTERVAL_MS: int(1000),
  /** Milliseconds the grab waits for one replica to acknowledge (WAIT 1 <ms>); 0 = do not wait. */
  SECKILL_REPLICA_WAIT_MS: int(0),
  /** How long a process remembers that a voucher is sold out / not started / ended and refuses grabs without Redis; 0 = off. */
  SECKILL_REFUSAL_MEMORY_MS: int(1000),
  /** Vouchers one process remembers refusals for at most (bounded memory). */
  SECKILL_REFUSAL_MEMORY_MAX: z.coerce.number().int().positive().default(10_000),
  /** How often the worker checks whether Redis may have forgotten writes (a restart, a failover); 0 = never. */
  REDIS_REPAIR_CHECK_MS: int(2000),
  /** After such a change, repair every live sale at these offsets (ms): at once, and again once the queued orders are in MySQL. */
  REDIS_REPAIR_DELAYS_MS: z
    .string()
    .default('0,5000,30000')
    .transform((s) => s.split(',').map((x) => Number(x.trim())).filter((n) => Number.isFinite(n) && n >= 0)),
  /** The RabbitMQ broker: one amqp URL, or a comma-separated list, one per node of a cluster (docs/rabbitmq.md#a-cluster). */
  RABBITMQ_URL: z.string().default('amqp://guest:guest@127.0.0.1:5672'),
  /**
   * AMQP heartbeat asked of the broker (seconds; the lower of this and the broker's wins): a node cut
   * off without a FIN is given up after two silent intervals and the client moves to a live node.
   * 0 = the broker's (60 s on Debian's RabbitMQ).
   */
  RABBITMQ_HEARTBEAT_SECONDS: int(5),
  /** Prefix of every exchange and queue name, so tests and several deployments can share a broker. */
  MQ_PREFIX: z.string().regex(/^[a-z0-9_.-]+$/i).default('hmdp'),

  // ── auth ──
  /** At least 32 characters; signs the session JWT cookie. */
  AUTH_SECRET: z.string().min(32, 'AUTH_SECRET must be at least 32 characters (npm run up generates one)'),
  /** The Redis session's lifetime, slid by every request that carries a valid session (public routes included). */
  SESSION_TTL_SECONDS: int(30 * 60),
  /**
   * Live sessions one user holds at most: a login beyond it revokes the user's oldest (by the time
   * in their token), so the newest stay. Each session is a Redis key a client can make by logging in.
   */
  SESSION_MAX_PER_USER: z.coerce.number().int().positive().default(20),
  /**
   * How long a process trusts a session it read (token → user) without asking Redis; revocations
   * reach it by pub/sub sooner. 0 = off. Default 1 s (measured: a sold-out storm costs 32 instead
   * of 38 µs of web CPU per request, docs/hot-server.md#session-cache). The test suites set 0 (e2e/support/setup-env.ts): their
   * tests delete or expire sessions behind the product's back and expect the next request to see
   * it; lib/auth/session-cache.test.ts turns it on and proves the bound. (Not keyed on NODE_ENV:
   * `next build` inlines NODE_ENV as production into the pages, which would then disagree.)
   */
  SESSION_CACHE_MS: int(1000),
  /** Tokens one process's session cache holds at most. */
  SESSION_CACHE_MAX: z.coerce.number().int().positive().default(50_000),

  // ── SMS and rate limits ──
  /** `dev` logs the code and writes dev:sms:{phone} (there is no SMS gateway). */
  SMS_PROVIDER: z.enum(['dev']).default('dev'),
  /** The dev SMS provider writes codes where tests can read them; never in production unless forced. */
  ALLOW_DEV_SMS_IN_PRODUCTION: bool.default(false),
  /** false switches every rate limit off (load tests). */
  RATE_LIMITS: bool.default(true),
  /** One code per phone per this many seconds. */
  SMS_COOLDOWN_SECONDS: int(60),
  /** Codes per phone per day asked from one client (address, or a device the phone logged in on before). */
  SMS_DAILY_MAX: int(10),
  /** Codes per phone per day from every client without such a device together: a stranger alone cannot use it up. */
  SMS_PHONE_DAILY_MAX: int(30),
  /** Codes per client address per hour (IPv6: per /64). */
  SMS_IP_HOURLY_MAX: int(30),
  /** Grab attempts per user per second. */
  SECKILL_USER_PER_SECOND: int(5),
  /** Grab attempts per client address per second. */
  SECKILL_IP_PER_SECOND: int(200),

  // ── waiting room and bot gate (lib/seckill/room, docs/fair-sale.md#the-waiting-room) ──
  /**
   * The room's serving counter admits this many tickets per second when the web process has no
   * measured rate of its own (no hot server here, or before its admission limit's first window);
   * otherwise it admits at the hot server's measured rate times WEB_CONCURRENCY.
   */
  ROOM_ADMIT_PER_SECOND: int(500),
  /** A ceiling on that rate (0 = none): e.g. what the order worker drains, or a slow room for the browser e2e. */
  ROOM_ADMIT_MAX_PER_SECOND: int(0),
  /**
   * An admitted ticket holds a unit this long, ms: the counter admits no more tickets than there
   * are units for, and a unit whose holder has not bought within it goes to the next ticket
   * (docs/fair-sale.md#an-admitted-ticket-holds-a-unit). 0 = no hold: the counter admits at its rate
   * whatever the stock, and the admitted race for the units.
   */
  ROOM_HOLD_MS: int(20_000),
  /**
   * Buying on admission in turn (docs/fair-sale.md#in-turn): a buyer admitted and told to solve the
   * gate keeps their turn this long, ms; a later place's grab, on any web process, is parked in
   * Redis until theirs (or until then). 0 = no turns: admitted buyers' grabs go in the order they arrive.
   */
  ROOM_TURN_MS: int(3_000),
  /**
   * An ordinary sale's room opens by itself when one web process sheds this many of its grabs
   * (admission limit full: 503) within a second; 0 = never (docs/fair-sale.md#opening-by-itself).
   */
  ROOM_AUTO_SHED_PER_SECOND: int(100),
  /** Such a room stays open this long after the last second that shed that many, ms. */
  ROOM_AUTO_OPEN_MS: int(60_000),
  /** Tickets one sale's room holds at most (a join beyond it: 503, try again). */
  ROOM_MAX_TICKETS: int(200_000),
  /**
   * Every unit spoken for (docs/fair-sale.md#every-unit-spoken-for): after the start, with a hold,
   * a join gets no ticket (名额已满) once the live tickets (waiting, or admitted and neither bought
   * nor past their hold) reach the stock left plus this reserve, per cent of that stock, for the
   * admitted who never buy. 0 with ROOM_RESERVE_MIN 0 = every join gets a ticket.
   */
  ROOM_RESERVE_PERCENT: int(0),
  /** The reserve's least, tickets (with ROOM_RESERVE_PERCENT; both 0: off). */
  ROOM_RESERVE_MIN: int(0),
  /**
   * The longest a waiting visitor's look may wait in the process for its moment (a long poll:
   * answered at admission, at the sell-out, or when this runs out), ms; the visitor asks for up to it
   * with `?wait=` (docs/fair-sale.md#waiting-without-polling). 0 = looks never wait.
   */
  ROOM_LONG_POLL_MS: int(20_000),
  /** Looks parked in one process at most; a look beyond it is answered at once. */
  ROOM_MAX_PARKED: int(50_000),
  /** How long a grab token is good for, ms: the admitted user grabs at once, or asks for another. */
  ROOM_GRAB_TOKEN_TTL_MS: int(60_000),
  /** The bot gate's default cost (altcha maxnumber; ~1.4 s in Node here, docs/fair-sale.md#the-bot-gate); a merchant sets it per sale. */
  ROOM_POW_COST: int(50_000),

  // ── shop cache (lib/cache, lib/shop) ──
  /** Shop detail and list lifetime in seconds; every TTL gets up to +CACHE_TTL_JITTER of random extra. */
  CACHE_SHOP_TTL_SECONDS: int(30 * 60),
  /** Lifetime of the "not in the DB" marker (the penetration guard). */
  CACHE_NULL_TTL_SECONDS: int(60),
  /** 0..1: keys written together expire apart (the avalanche guard). */
  CACHE_TTL_JITTER: z.coerce.number().min(0).max(1).default(0.2),
  /** Hot shops keep their entry forever and refresh it in the background after this long. */
  CACHE_LOGICAL_TTL_SECONDS: int(10 * 60),
  /** Comma-separated shop ids that are always hot (logical expiry, never a wait). */
  CACHE_HOT_SHOP_IDS: z
    .string()
    .default('')
    .transform((s) => s.split(',').map((x) => x.trim()).filter((x) => /^[1-9]\d{0,18}$/.test(x))),
  /** Plus the top N shops by sold (recomputed by `npm run cache:warm`). */
  CACHE_HOT_TOP_N: int(5),
  /** How long a reader waits for another instance's rebuild before loading on its own. */
  CACHE_LOCK_WAIT_MS: int(3000),
  /** A cache command slower than this counts as "Redis down" for this read. */
  CACHE_REDIS_TIMEOUT_MS: int(500),
  /** Redis down: at most this many DB loads at once in this process, the rest queue (then 503). */
  CACHE_DB_FALLBACK_CONCURRENCY: int(8),

  // ── flash sale, worker and order lifecycle ──
  /** Unacked order messages per worker. */
  WORKER_PREFETCH: int(1000),
  /** Orders per MySQL transaction. */
  WORKER_BATCH_SIZE: int(500),
  /** How long a partial batch waits for more orders. */
  WORKER_BATCH_WAIT_MS: int(20),
  /** The order worker's nice value (0-19, 0 = as started): it yields the CPU to the grab path when both want it (lib/order/priority.ts). */
  WORKER_NICE: z.coerce.number().int().min(0).max(19).default(10),
  /** Deliveries before an order message is dead-lettered. */
  ORDER_MAX_ATTEMPTS: int(5),
  /** Retry backoff base (1x, 5x, 25x, 60x). */
  ORDER_RETRY_BASE_MS: int(1000),
  /** How often the sweeper looks at the pending outbox. */
  OUTBOX_SWEEP_INTERVAL_MS: int(5000),
  /** A pending order older than this is published again. Must be above PUBLISH_CONFIRM_TIMEOUT_MS (see there). */
  OUTBOX_STALE_MS: int(10000),
  /**
   * How long an accepted grab waits for its order message's broker confirm before it gives the unit back and answers 503.
   * Must be below OUTBOX_STALE_MS (a process refuses to start otherwise), and well below: a message that never left the
   * process is given back by removing its outbox entry, which is only safe while the sweeper has not republished it as stale.
   */
  PUBLISH_CONFIRM_TIMEOUT_MS: z.coerce.number().int().positive().default(2000),
  /** Unpaid orders are cancelled (and their unit returned) this long after they were accepted. */
  ORDER_PAY_TIMEOUT_SECONDS: z.coerce.number().int().positive().default(900),
  /** How often the SQL backstop looks for overdue unpaid orders and unit returns owed to Redis. */
  ORDER_TIMEOUT_SWEEP_INTERVAL_MS: int(5000),
  /** `dev` pays and refunds at once (no money). */
  PAYMENT_PROVIDER: z.enum(['dev']).default('dev'),
  /** The dev payment provider "pays" with no money; never in production unless forced (and then never on a public HOST). */
  ALLOW_DEV_PAYMENT_IN_PRODUCTION: bool.default(false),
  /**
   * Signs the payment provider's notify calls (HMAC-SHA256); empty refuses every notify. When set,
   * at least 32 bytes: a short secret can be guessed offline from one captured notify.
   */
  PAYMENT_NOTIFY_SECRET: z
    .string()
    .default('')
    .refine((s) => s === '' || Buffer.byteLength(s, 'utf8') >= 32, 'must be at least 32 bytes (or empty to refuse every notify)'),
  /** How often the payment reconciler (in the worker) looks for money owed: refunds not confirmed, charges not settled. */
  PAYMENT_RECONCILE_INTERVAL_MS: int(10_000),
  /** How old a provider call must be before the reconciler retries it or asks the provider about it (a live pay is left alone). */
  PAYMENT_RECONCILE_GRACE_SECONDS: int(60),
  /** Live seckill orders are one per user; normal vouchers allow this many unpaid + paid per user. */
  NORMAL_VOUCHER_USER_CAP: z.coerce.number().int().positive().default(10),
  /**
   * Normal vouchers: cancelled (by the buyer or unpaid past the timeout) in the last 24 h plus
   * unpaid now, per user and voucher; a buy is refused at this many (lib/order/normal-order.ts).
   */
  NORMAL_VOUCHER_CANCEL_CAP: z.coerce.number().int().positive().default(3),
  /** How long a waiting user's offer of a returned flash-sale unit stays open before it moves on (docs/fair-sale.md#waitlist). */
  WAITLIST_OFFER_MS: z.coerce.number().int().positive().default(120_000),
  /** Most users one sale's waitlist holds; a join beyond it answers 409 WAITLIST_FULL. */
  WAITLIST_MAX: z.coerce.number().int().positive().default(10_000),
  /** How often the worker closes expired offers and moves their units on; 0 = never (tests run the pass themselves). */
  WAITLIST_SWEEP_INTERVAL_MS: int(1000),
  /** An ended sale's Redis keys live this long once its outbox is empty (lib/seckill/sale-expiry.ts). */
  SECKILL_ENDED_KEY_TTL_SECONDS: int(24 * 3600),
  /** /api/health warns when Redis uses more than this share of maxmemory (or of REDIS_MEMORY_WARN_BYTES without a maxmemory). */
  REDIS_MEMORY_WARN_RATIO: z.coerce.number().min(0).max(1).default(0.8),
  /** The budget /api/health measures against when Redis has no maxmemory; 0 = no warning then. */
  REDIS_MEMORY_WARN_BYTES: int(0),
  /** Port of the worker's Prometheus /metrics endpoint; 0 = off. */
  WORKER_METRICS_PORT: int(0),

  // ── 点评 (notes, feed) ──
  /** 点评: where uploaded note images are stored (created on demand; gitignored default); every web instance must see the same directory. */
  UPLOAD_DIR: z.string().min(1).default('data/uploads'),
  /** 点评: images one user may have stored at once (on notes or waiting for one); past it an upload is refused (409). 0 = no cap. */
  UPLOAD_MAX_PER_USER: int(1000),
  /** 点评: each follower's feed inbox keeps only its newest this many notes. */
  FEED_INBOX_MAX: z.coerce.number().int().positive().default(1000),
  /** 点评: followers read from MySQL and pushed to Redis per step of the fan-out. */
  FEED_FANOUT_BATCH: z.coerce.number().int().positive().default(2000),
});

export type Env = z.infer<typeof schema>;
/** The schema itself, for scripts/env-doc.ts (docs/configuration.md is generated from this file). */
export { schema as envSchema };

/** The nodes of the redlock lock: REDIS_URL (unless a Redis Cluster replaces it) plus REDLOCK_NODES, each once. */
export function redlockNodes(e: Pick<Env, 'REDIS_URL' | 'REDLOCK_NODES' | 'REDIS_CLUSTER_NODES'>): string[] {
  return [...new Set([...(e.REDIS_CLUSTER_NODES.length ? [] : [e.REDIS_URL]), ...e.REDLOCK_NODES])];
}

/** Settings that are each valid alone but not together; one message per problem, naming the variable. */
export function crossFieldProblems(e: Env): string[] {
  const problems: string[] = [];
  if (e.LOCK_BACKEND === 'redlock') {
    const nodes = redlockNodes(e);
    const bad = nodes.filter((u) => !/^rediss?:\/\/[^/\s]+(\/\d+)?$/.test(u));
    if (bad.length) problems.push(`REDLOCK_NODES: not a redis://host:port[/db] URL: ${bad.join(', ')}`);
    else if (new Set(nodes.map((u) => new URL(u).pathname.slice(1) || '0')).size > 1) problems.push('REDLOCK_NODES: every redlock node must use the same db index as the first');
    if (nodes.length < 3) {
      const from = e.REDIS_CLUSTER_NODES.length ? 'REDLOCK_NODES (REDIS_URL is not one: a Redis Cluster is set)' : 'REDIS_URL + REDLOCK_NODES';
      problems.push(`LOCK_BACKEND: redlock needs at least 3 independent Redis nodes, ${from} name ${nodes.length}`);
    }
  }
  if (e.LOCK_BACKEND === 'zookeeper') {
    // host:port,host:port[/chroot] (the chroot, if any, follows the last server)
    const servers = e.ZOOKEEPER_CONNECT.replace(/\/.*$/, '').split(',').map((x) => x.trim());
    if (!e.ZOOKEEPER_CONNECT.trim()) problems.push('ZOOKEEPER_CONNECT: LOCK_BACKEND=zookeeper needs the ensemble (host:port, comma separated)');
    else if (servers.some((x) => !/^[^:/\s]+:\d{1,5}$/.test(x))) problems.push(`ZOOKEEPER_CONNECT: expected host:port[,host:port…], got "${e.ZOOKEEPER_CONNECT}"`);
    if (e.ZOOKEEPER_SESSION_TIMEOUT_MS < 200) problems.push('ZOOKEEPER_SESSION_TIMEOUT_MS: at least 200 (ZooKeeper grants no shorter session)');
  }
  // A grab whose message never left this process gives its unit back by removing the outbox entry
  // (lib/seckill/grab.ts giveBackUnconfirmed), which it does once the confirm wait has run out. Only
  // the sweeper's not having republished the entry yet (it does past OUTBOX_STALE_MS) makes that
  // safe: a republished order the worker writes, with its unit given back, is a unit sold twice.
  if (e.PUBLISH_CONFIRM_TIMEOUT_MS >= e.OUTBOX_STALE_MS)
    problems.push(
      `PUBLISH_CONFIRM_TIMEOUT_MS (${e.PUBLISH_CONFIRM_TIMEOUT_MS}) must be below OUTBOX_STALE_MS (${e.OUTBOX_STALE_MS}): ` +
        'a grab gives back an unsent order only before the sweeper republishes it as stale',
    );
  return problems;
}

function load(): Env {
  const parsed = schema.safeParse(process.env);
  const lines = parsed.success
    ? crossFieldProblems(parsed.data).map((p) => `  ${p}`)
    : parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
  if (!parsed.success || lines.length) throw new Error(`Invalid environment:\n${lines.join('\n')}`);
  return Object.freeze(parsed.data);
}

export const env: Env = load();
export const isProduction = env.NODE_ENV === 'production';
