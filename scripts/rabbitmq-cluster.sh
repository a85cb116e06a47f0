#!/usr/bin/env bash
# A local 3-node RabbitMQ cluster for tests and demos (docs/rabbitmq.md#a-cluster): Debian's
# rabbitmq-server started three times side by side on loopback AMQP ports BASE..BASE+2 (Erlang
# distribution ports BASE+20000..), data and logs under one temp dir, one shared Erlang cookie,
# nodes 2 and 3 joined to node 1. The system RabbitMQ on 5672 is never touched. Idempotent.
#   scripts/rabbitmq-cluster.sh [start|stop] [BASE=5701]
#   scripts/rabbitmq-cluster.sh node N [BASE]   start node N (1..3) again after a kill, same data
#   scripts/rabbitmq-cluster.sh kill N [BASE]   SIGKILL node N (a crash, not a shutdown)
# Prints the RABBITMQ_URL value (comma-separated, one URL per node) on its last line.
set -euo pipefail
action=${1:-start}
if [ "$action" = node ] || [ "$action" = kill ]; then n=$2; base=${3:-${RABBITMQ_CLUSTER_BASE_PORT:-5701}}
else base=${2:-${RABBITMQ_CLUSTER_BASE_PORT:-5701}}; fi
dir=${RABBITMQ_CLUSTER_DIR:-/tmp/hmdp-rabbitmq-cluster-$base}
bin=/usr/lib/rabbitmq/bin
urls=$(for i in 1 2 3; do printf 'amqp://guest:guest@127.0.0.1:%s,' $((base + i - 1)); done | sed 's/,$//')

name() { echo "hmdpq$1x$base@localhost"; }
port() { echo $((base + $1 - 1)); }
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# A failed probe (node not up yet) must not leave erl_crash.dump in the caller's directory.
ctl() { HOME="$dir" ERL_CRASH_DUMP=/dev/null RABBITMQ_CONF_ENV_FILE=/dev/null "$bin/rabbitmqctl" -q "$@"; }

start_node() {
  local d="$dir/n$1" p; p=$(port "$1")
  mkdir -p "$d"
  echo '[].' >"$d/enabled_plugins"
  printf 'listeners.tcp.default = 127.0.0.1:%s\nloopback_users = none\n' "$p" >"$d/rabbitmq.conf"
  # The Debian wrapper drops the environment when it switches user: call the real script.
  HOME="$dir" RABBITMQ_CONF_ENV_FILE=/dev/null RABBITMQ_CONFIG_FILE="$d/rabbitmq.conf" \
    RABBITMQ_NODENAME="$(name "$1")" RABBITMQ_NODE_PORT="$p" RABBITMQ_DIST_PORT=$((p + 20000)) \
    RABBITMQ_MNESIA_BASE="$d/mnesia" RABBITMQ_LOG_BASE="$d/log" RABBITMQ_ENABLED_PLUGINS_FILE="$d/enabled_plugins" \
    setsid "$bin/rabbitmq-server" >"$d/stdout.log" 2>&1 </dev/null &
  echo $! >"$d/pid"
}
wait_node() {
  for _ in $(seq 1 300); do listening "$(port "$1")" && return 0; sleep 0.2; done
  echo "✗ rabbitmq node $1 did not start (see $dir/n$1/log)" >&2; exit 1
}
kill_node() {
  local pid; pid=$(cat "$dir/n$1/pid" 2>/dev/null || true)
  # The server script runs the Erlang VM as its child: kill the whole process group it leads.
  [ -n "$pid" ] && kill -9 -- "-$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do listening "$(port "$1")" || return 0; sleep 0.1; done
}
running() { [ "$(ctl -n "$(name 1)" eval 'length(rabbit_nodes:all_running()).' 2>/dev/null || echo 0)" = 3 ]; }

case "$action" in
  kill) kill_node "$n"; echo "✓ node $n ($(name "$n")) killed"; exit 0 ;;
  node) start_node "$n"; wait_node "$n"; echo "✓ node $n ($(name "$n")) started"; exit 0 ;;
  stop)
    for i in 1 2 3; do kill_node "$i"; done
    rm -rf "$dir"
    echo "✓ RabbitMQ cluster on $base-$((base + 2)) stopped"; exit 0 ;;
esac

[ -x "$bin/rabbitmq-server" ] || { echo "✗ rabbitmq-server is missing (Debian: apt-get install rabbitmq-server)" >&2; exit 1; }
if running; then echo "✓ RabbitMQ cluster already up on $base-$((base + 2))"; echo "$urls"; exit 0; fi

# A half-made cluster is rebuilt from scratch.
for i in 1 2 3; do kill_node "$i"; done
rm -rf "$dir"
mkdir -p "$dir"
head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr a-f A-F >"$dir/.erlang.cookie"
chmod 400 "$dir/.erlang.cookie"
for i in 1 2 3; do start_node "$i"; done
for i in 1 2 3; do wait_node "$i"; done
for i in 2 3; do
  ctl -n "$(name "$i")" stop_app
  ctl -n "$(name "$i")" join_cluster "$(name 1)"
  ctl -n "$(name "$i")" start_app
done
for _ in $(seq 1 100); do running && break; sleep 0.2; done
running || { echo "✗ the three nodes did not form one cluster" >&2; exit 1; }
echo "✓ RabbitMQ cluster up on $base-$((base + 2)) (3 nodes)"
echo "$urls"
