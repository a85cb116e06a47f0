#!/usr/bin/env bash
# npm test — installs what is missing (dependencies, Chromium), starts the services, then runs
# typecheck, lint, unit + integration tests (vitest) and browser e2e (Playwright), all against a
# test database, Redis db index and queue prefix of their own.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh

if [ ! -x /usr/bin/chromium ] && ! ls "${PLAYWRIGHT_BROWSERS_PATH:-$HOME/.cache/ms-playwright}"/chromium-* >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "… installing Chromium for the browser tests"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    npx playwright install chromium || { echo "✗ no Chromium: install Debian's chromium or run 'npx playwright install chromium'" >&2; exit 1; }
  fi
fi

export NODE_ENV=test
export DATABASE_URL="${TEST_DATABASE_URL:-mysql://root@127.0.0.1:3306/hmdp_test}"
export REDIS_URL="${TEST_REDIS_URL:-redis://127.0.0.1:6379/1}"
export MQ_PREFIX="${TEST_MQ_PREFIX:-hmdp_test}"
export AUTH_SECRET="${TEST_AUTH_SECRET:-test-secret-0123456789abcdef0123456789abcdef}"
export LOG_LEVEL="${LOG_LEVEL:-warn}"

bash scripts/services.sh
# The ZooKeeper lock tests (lib/lock/zookeeper*.test.ts, in the vitest run) start their own servers
# on 2282-2283 from Debian's package; install it up front so a missing package fails here, clearly.
bash scripts/services.sh zookeeper install
echo "▶ typecheck";            npx tsc --noEmit
echo "▶ lint";                 npx eslint . --max-warnings=0
# Build before the tests: the security suite scans the client bundles, e2e serves the build.
echo "▶ build";                mkdir -p .run; npx next build >.run/test-build.log 2>&1 || { tail -40 .run/test-build.log; exit 1; }
# VITEST_EXCLUDE: files a step leaves out (vitest.config.ts; the CLI --exclude does not reach projects).
broker_restart=lib/order/timeout-broker-restart.test.ts
echo "▶ unit + integration";   VITEST_EXCLUDE=$broker_restart npx vitest run
# The private-broker restart proof on its own, with one retry: in the full run it has timed out
# now and then on this 2-core machine (it passes alone); see docs/order-lifecycle.md#tests.
echo "▶ payment timeout across a broker restart"; npx vitest run lib/order/timeout-broker-restart.test.ts --retry 1
# The Redis-touching paths once more on a real 3 + 3 Redis Cluster (about a minute): sessions and
# logins, locks (release notifications across nodes), the cache mutex, the grab path and the worker
# (not the private-broker restart test: it proves RabbitMQ, not Redis or HTTP, and takes 75 s).
echo "▶ again on Redis Cluster"
cluster_nodes=$(bash scripts/services.sh cluster | tail -1)
# A cluster left running by an earlier run keeps its keys (it has no database numbers): start empty.
bash scripts/services.sh cluster flush
REDIS_CLUSTER_NODES="$cluster_nodes" VITEST_EXCLUDE=$broker_restart npx vitest run lib/redis lib/auth e2e/routes/auth lib/lock/lock.test.ts lib/lock/cluster.test.ts lib/cache/cache-client.test.ts lib/seckill e2e/routes/seckill lib/order e2e/routes/order
# The same grab/order tests and the hostile sweep again, hot routes over HTTP through the hot server,
# with the web processes' Redis writes (one socket write per event-loop turn, lib/redis/write-per-turn.ts).
echo "▶ hot door";             TEST_DOOR=hot REDIS_AUTO_PIPELINING=true VITEST_EXCLUDE=$broker_restart npx vitest run lib/seckill e2e/routes/seckill e2e/routes/reservation e2e/routes/room lib/order e2e/routes/order e2e/hostile
# Adaptive admission (the default) on the real grab, against the fixed limit, the offered load
# tripled past the measured knee (about a minute; docs/hot-server.md#adaptive-admission): alone,
# because it measures the box. A neighbour's load on a shared host moves the knee for minutes, not
# for one run (2026-11-26: 4 failures in a row within 15 minutes, the code that had passed an hour
# before among them): up to 4 tries, a minute and a half apart; every try's figures are printed.
# The CPU-bound handler's proof (lib/hot/adaptive-admission.test.ts) runs here too, after it and
# alone: in the parallel suite another file's work shared its cores (2026-11-26: 0.75× fixed's
# throughput in a CI run, 0.74–0.94× alone).
echo "▶ adaptive admission proof"
for try in 1 2 3 4; do
  HOT_ADMISSION_PROOF=1 npx vitest run e2e/routes/hot/adaptive-grab.test.ts && HOT_ADMISSION_PROOF=1 npx vitest run lib/hot/adaptive-admission.test.ts && break
  [ "$try" = 4 ] && { echo "✗ adaptive admission proof: 4 tries failed" >&2; exit 1; }
  echo "… measuring the box again in 90 s (try $((try + 1)) of 4)"; sleep 90
done
echo "▶ fault suite (CI size)"; npx tsx e2e/faults/run.ts --ci
# A waiting room through a Redis restart and a web-instance kill (about 70 s): real room clients over
# HTTP, sold out exactly, oversold = duplicates = lost = 0 (docs/testing.md#a-waiting-room-through-faults).
echo "▶ waiting room through faults (CI size)"; npx tsx e2e/faults/room.ts --ci
# A Redis Cluster failover mid-sale with the replica made to fall behind first (about 45 s): the
# forgotten grabs are repaired by the worker itself, every 200 reads created/failed to its buyer.
echo "▶ failover mid-sale";     npx tsx e2e/faults/failover.ts --ci
# The same over a sale spread on 3 stock buckets, bucket 1's master killed (docs/buckets.md).
echo "▶ failover mid-sale, 3 buckets"; npx tsx e2e/faults/failover.ts --ci --buckets 3
# A RabbitMQ node lost mid-sale (about 80 s): a fresh 3-node cluster, the orders queue's leader
# SIGKILLed while buyers grab through it; grabs keep being accepted, 0 lost (docs/rabbitmq.md#a-node-lost-mid-sale).
echo "▶ broker node lost mid-sale"; npx tsx e2e/faults/rabbit-cluster.ts --ci --via-victim
# The node that leads the (quorum) payment-timeout queues SIGKILLed while 40 timeouts wait out
# their TTL (about 2 min): every order still cancelled by its message (docs/rabbitmq.md).
echo "▶ broker node lost while timeouts wait"; npx tsx e2e/faults/rabbit-timeout.ts
# Links cut, not processes killed (root; about 3 min): hosts in network namespaces; a sale's Redis
# master cut off from the majority, a web host cut off from Redis, the orders-queue leader cut off
# then killed (docs/testing.md#partitions). Prints SKIPPED where namespaces cannot be made.
echo "▶ partitions (CI size)"; npx tsx e2e/faults/partitions.ts --ci
echo "▶ browser e2e";          npx playwright test -c e2e/playwright.config.ts
echo "▶ browser e2e: order lifecycle (12 s payment window)"; ORDER_PAY_TIMEOUT_SECONDS=12 npx playwright test -c e2e/playwright.config.ts e2e/lifecycle.spec.ts
