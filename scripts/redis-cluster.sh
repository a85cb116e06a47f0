#!/usr/bin/env bash
# A local Redis Cluster for tests and demos: 3 masters + 3 replicas of Debian's redis-server on
# loopback ports BASE..BASE+5 (cluster bus +10000), AOF everysec, node timeout 2 s so a killed
# master's replica takes over within a few seconds. Idempotent: a healthy cluster is reused.
#   scripts/redis-cluster.sh [start|stop|flush] [BASE=7000]
#   scripts/redis-cluster.sh node PORT      restart one node (after a kill) with its saved state
# Prints the REDIS_CLUSTER_NODES value to use on its last line.
set -euo pipefail
action=${1:-start}
base=${2:-${REDIS_CLUSTER_BASE_PORT:-7000}}
dir=${REDIS_CLUSTER_DIR:-/tmp/hmdp-redis-cluster-$base}
ports=$(seq "$base" $((base + 5)))
nodes=$(for p in $ports; do printf '127.0.0.1:%s,' "$p"; done | sed 's/,$//')

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
cluster_ok() { redis-cli -p "$base" cluster info 2>/dev/null | grep -q 'cluster_state:ok' && [ "$(redis-cli -p "$base" cluster nodes 2>/dev/null | grep -c master)" -ge 3 ]; }

start_node() {
  mkdir -p "$dir/$1"
  redis-server --daemonize yes --bind 127.0.0.1 --port "$1" --dir "$dir/$1" \
    --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 2000 \
    --appendonly yes --appendfsync "${REDIS_CLUSTER_FSYNC:-everysec}" --save '' --maxmemory-policy noeviction \
    --logfile "$dir/$1/redis.log"
}
if [ "$action" = node ]; then
  base=7000; [ -n "${REDIS_CLUSTER_BASE_PORT:-}" ] && base=$REDIS_CLUSTER_BASE_PORT
  dir=${REDIS_CLUSTER_DIR:-/tmp/hmdp-redis-cluster-$base}
  start_node "$2"
  for _ in $(seq 1 50); do listening "$2" && exit 0; sleep 0.1; done
  echo "✗ redis node $2 did not start" >&2; exit 1
fi

if [ "$action" = flush ]; then
  # Empties a running cluster (the masters; a replica refuses and follows its master): a test run
  # whose database starts its ids where another run's did must not meet that run's keys.
  for p in $ports; do redis-cli -p "$p" flushall >/dev/null 2>&1 || true; done
  echo "✓ Redis Cluster on $base-$((base + 5)) emptied"
  exit 0
fi

if [ "$action" = stop ]; then
  for p in $ports; do redis-cli -p "$p" shutdown nosave >/dev/null 2>&1 || true; done
  rm -rf "$dir"
  echo "✓ Redis Cluster on $base-$((base + 5)) stopped"
  exit 0
fi

if ! command -v redis-server >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || { echo "✗ redis-server is missing (Debian: apt-get install redis-server)" >&2; exit 1; }
  apt-get install -y -qq -o DPkg::Lock::Timeout=600 redis-server >/dev/null
fi

if cluster_ok; then echo "✓ Redis Cluster already up on $base-$((base + 5))"; echo "$nodes"; exit 0; fi

# A half-made cluster (some nodes up, no agreement) is rebuilt from scratch.
for p in $ports; do redis-cli -p "$p" shutdown nosave >/dev/null 2>&1 || true; done
rm -rf "$dir"
for p in $ports; do start_node "$p"; done
for p in $ports; do
  for _ in $(seq 1 50); do listening "$p" && break; sleep 0.1; done
  listening "$p" || { echo "✗ redis node $p did not start (see $dir/$p/redis.log)" >&2; exit 1; }
done
# shellcheck disable=SC2086
redis-cli --cluster create $(for p in $ports; do printf '127.0.0.1:%s ' "$p"; done) --cluster-replicas 1 --cluster-yes >"$dir/create.log" 2>&1 ||
  { cat "$dir/create.log" >&2; exit 1; }
for _ in $(seq 1 100); do cluster_ok && break; sleep 0.2; done
cluster_ok || { echo "✗ the cluster did not reach cluster_state:ok" >&2; exit 1; }
# Every replica must have finished its first sync, or a test's first failover has nothing to promote.
for _ in $(seq 1 100); do
  synced=0
  for p in $ports; do redis-cli -p "$p" info replication | grep -q 'master_link_status:up' && synced=$((synced + 1)); done
  [ "$synced" -ge 3 ] && break
  sleep 0.2
done
echo "✓ Redis Cluster up on $base-$((base + 5)) (3 masters + 3 replicas)"
echo "$nodes"
