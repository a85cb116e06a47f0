/**
 * Runs before every test file (and before lib/env is imported): points the process at the test
 * database, Redis db index and queue prefix, unless scripts/test.sh already did.
 */
(process.env as Record<string, string>).NODE_ENV = 'test';
process.env.DATABASE_URL ??= 'mysql://root@127.0.0.1:3306/hmdp_test';
process.env.REDIS_URL ??= 'redis://127.0.0.1:6379/1';
process.env.MQ_PREFIX ??= 'hmdp_test';
process.env.AUTH_SECRET ??= 'test-secret-0123456789abcdef0123456789abcdef';
process.env.LOG_LEVEL ??= 'warn';
// Tests expire or delete sessions in Redis behind the product's back and expect the next request
// (API or page, in the web server Playwright starts too) to see it: no per-process session cache.
process.env.SESSION_CACHE_MS ??= '0';
// Tests fire thousands of concurrent requests at one process on a shared 2-core machine: a 1 s Redis
// command timeout (the product's default) turns a slow moment into 503s there. The tests of the
// timeout itself set it back (lib/redis/timeout.test.ts, e2e/routes/seckill/grab-timeout.test.ts).
process.env.REDIS_COMMAND_TIMEOUT_MS ??= '5000';
// The ZooKeeper lock tests start their own server on this port (e2e/support/zookeeper-server.ts).
process.env.ZOOKEEPER_CONNECT ??= '127.0.0.1:2282';
process.env.ZOOKEEPER_SESSION_TIMEOUT_MS ??= '1000';
