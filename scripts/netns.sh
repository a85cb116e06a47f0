#!/usr/bin/env bash
# Hosts on this one machine, for partition tests (docs/testing.md#partitions): each host is a
# network namespace `hmdp-<host>` with one veth into the bridge `hmdpbr0` (10.77.0.1/24 in the
# host's own namespace, which is where the test driver runs). All traffic stays on this machine;
# nothing in the default namespace is touched except that bridge and its veth ends.
#
#   scripts/netns.sh up [HOST…]      create the bridge and the hosts (default: every host below)
#   scripts/netns.sh down            remove every hmdp-* namespace, its veth, /etc/netns/hmdp-*, the bridge
#   scripts/netns.sh ip HOST         the host's address
#   scripts/netns.sh cut A B         partition A from B (both directions; A and B may be comma-separated
#                                    groups, e.g. cut r1,web1 r2,r3,web2): packets are silently dropped,
#                                    established connections stall, new ones hang — as on a real cut
#   scripts/netns.sh heal [A B]      undo one cut, or every cut
#   scripts/netns.sh cuts            list the cuts in force
#   scripts/netns.sh run CMD…        up, run CMD, down on exit whatever happens (trap)
#   scripts/netns.sh rabbit          a 3-node RabbitMQ cluster, rabbit@mq1..rabbit@mq3 on port 5672 of those
#                                    hosts (names resolved by each namespace's /etc/netns hosts file),
#                                    mq2 and mq3 joined to mq1; prints the RABBITMQ_URL value last
#   scripts/netns.sh rabbit-kill N   SIGKILL the broker on mqN (a crash)
#   scripts/netns.sh rabbitmqctl N … rabbitmqctl against rabbit@mqN, run on that host
#   scripts/netns.sh redis           a 3 + 3 Redis Cluster, one node per host r1..r6 on port 7000 of
#                                    that host (announcing its host address), node timeout 2 s, AOF
#                                    everysec; prints the REDIS_CLUSTER_NODES value on its last line
#
# How a cut works with iproute2 alone (no iptables or nft on this machine, and tc's actions are not
# built into its kernel): A's neighbour entry for B's address is pinned to a MAC no host has, and
# B's for A likewise. The bridge floods such frames, every other port drops them as not theirs, so
# nothing between A and B arrives, and a connect() hangs instead of failing fast (a blackhole route
# would answer EINVAL at once, which is a refusal, not a partition).
set -euo pipefail
BR=hmdpbr0
NET=10.77.0
BLACK=02:00:00:00:00:fe
# host → last octet. front: spare client host; db: MariaDB (+ RabbitMQ when not clustered).
declare -A OCTET=(
  [front]=10 [web1]=11 [web2]=12 [worker]=13 [db]=2
  [r1]=21 [r2]=22 [r3]=23 [r4]=24 [r5]=25 [r6]=26
  [mq1]=31 [mq2]=32 [mq3]=33
)
ALL="db front web1 web2 worker r1 r2 r3 r4 r5 r6 mq1 mq2 mq3"

need_root() {
  [ "$(id -u)" = 0 ] || { echo "✗ network namespaces need root" >&2; exit 2; }
  if ! command -v ip >/dev/null; then
    command -v apt-get >/dev/null || { echo "✗ network namespaces need iproute2 (ip)" >&2; exit 2; }
    apt-get install -y -qq -o DPkg::Lock::Timeout=600 iproute2 >/dev/null
  fi
}
ns() { echo "hmdp-$1"; }
addr() {
  [ -n "${OCTET[$1]:-}" ] || { echo "✗ unknown host '$1' (hosts: $ALL)" >&2; exit 1; }
  echo "$NET.${OCTET[$1]}"
}

up_host() {
  local h=$1 n; n=$(ns "$h")
  ip netns list | grep -qw "^$n" && return 0
  ip netns add "$n"
  # A veth of a namespace deleted a moment ago can outlive it briefly.
  ip link del "hv-$h" 2>/dev/null || true
  ip link add "hv-$h" type veth peer name eth0 netns "$n"
  ip link set "hv-$h" master "$BR" up
  ip -n "$n" addr add "$(addr "$h")/24" dev eth0
  ip -n "$n" link set lo up
  ip -n "$n" link set eth0 up
  # Names resolvable inside the namespace (RabbitMQ node names): /etc/netns/<ns>/hosts is
  # bind-mounted over /etc/hosts by `ip netns exec`.
  mkdir -p "/etc/netns/$n"
  { echo "127.0.0.1 localhost $(hostname)"; for x in $ALL; do echo "$(addr "$x") $x"; done; } >"/etc/netns/$n/hosts"
}

up() {
  need_root
  if ! ip link show "$BR" >/dev/null 2>&1; then
    ip link add "$BR" type bridge
    ip addr add "$NET.1/24" dev "$BR"
    ip link set "$BR" up
  fi
  local h hosts=("$@")
  [ ${#hosts[@]} -gt 0 ] || read -ra hosts <<<"$ALL"
  for h in "${hosts[@]}"; do up_host "$h"; done
  echo "✓ hosts up on $BR ($NET.0/24)"
}

down() {
  need_root
  local n
  for n in $(ip netns list | awk '{print $1}' | grep '^hmdp-' || true); do
    # Whatever still runs in the namespace goes with it.
    for pid in $(ip netns pids "$n" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$n" 2>/dev/null || true
    rm -rf "/etc/netns/$n"
  done
  for h in $ALL; do ip link del "hv-$h" 2>/dev/null || true; done
  ip link del "$BR" 2>/dev/null || true
  rmdir /etc/netns 2>/dev/null || true
  rm -rf "$REDIS_DIR" "$RABBIT_DIR"
  echo "✓ hosts down"
}

cut() {
  # A and B may be comma-separated groups: every link between the two groups is cut.
  local a b
  for a in ${1//,/ }; do for b in ${2//,/ }; do
    ip -n "$(ns "$a")" neigh replace "$(addr "$b")" lladdr "$BLACK" nud permanent dev eth0
    ip -n "$(ns "$b")" neigh replace "$(addr "$a")" lladdr "$BLACK" nud permanent dev eth0
  done; done
}
heal_pair() {
  ip -n "$(ns "$1")" neigh del "$(addr "$2")" dev eth0 2>/dev/null || true
  ip -n "$(ns "$2")" neigh del "$(addr "$1")" dev eth0 2>/dev/null || true
}
cuts() {
  local n
  for n in $(ip netns list | awk '{print $1}' | grep '^hmdp-' || true); do
    ip -n "$n" neigh show nud permanent | grep -i "$BLACK" | awk -v n="${n#hmdp-}" '{print n " ✂ " $1}' || true
  done
}
heal_all() {
  local n ipaddr
  for n in $(ip netns list | awk '{print $1}' | grep '^hmdp-' || true); do
    for ipaddr in $(ip -n "$n" neigh show nud permanent | grep -i "$BLACK" | awk '{print $1}' || true); do
      ip -n "$n" neigh del "$ipaddr" dev eth0 2>/dev/null || true
    done
  done
}

REDIS_DIR=${NETNS_REDIS_DIR:-/tmp/hmdp-netns-redis}
redis_up() {
  need_root
  command -v redis-server >/dev/null || { echo "✗ redis-server is missing (Debian: apt-get install redis-server)" >&2; exit 1; }
  rm -rf "$REDIS_DIR"
  local h seeds=() nodes=()
  for h in r1 r2 r3 r4 r5 r6; do
    mkdir -p "$REDIS_DIR/$h"
    # Bound to the host's own address only: nothing listens on the machine's loopback or beyond the bridge.
    ip netns exec "$(ns "$h")" redis-server --daemonize yes --bind "$(addr "$h")" --port 7000 --protected-mode no \
      --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 2000 \
      --cluster-announce-ip "$(addr "$h")" --dir "$REDIS_DIR/$h" --pidfile "$REDIS_DIR/$h/pid" \
      --appendonly yes --appendfsync everysec --save '' --maxmemory-policy noeviction --logfile "$REDIS_DIR/$h/redis.log"
    seeds+=("$(addr "$h"):7000")
  done
  for h in r1 r2 r3 r4 r5 r6; do
    for _ in $(seq 1 50); do redis-cli -h "$(addr "$h")" -p 7000 ping >/dev/null 2>&1 && break; sleep 0.1; done
  done
  # r1..r3 become the masters, r4..r6 the replicas (redis-cli picks which replica serves which master).
  redis-cli --cluster create "${seeds[@]}" --cluster-replicas 1 --cluster-yes >"$REDIS_DIR/create.log" 2>&1 ||
    { cat "$REDIS_DIR/create.log" >&2; exit 1; }
  local ok=0
  for _ in $(seq 1 100); do
    if redis-cli -h "$(addr r1)" -p 7000 cluster info | grep -q cluster_state:ok; then
      local synced=0
      for h in r1 r2 r3 r4 r5 r6; do redis-cli -h "$(addr "$h")" -p 7000 info replication | grep -q master_link_status:up && synced=$((synced + 1)); done
      [ "$synced" -ge 3 ] && { ok=1; break; }
    fi
    sleep 0.2
  done
  [ "$ok" = 1 ] || { echo "✗ the cluster on r1..r6 did not become ok with 3 synced replicas" >&2; exit 1; }
  echo "✓ Redis Cluster on r1..r6 (3 masters + 3 replicas)"
  local IFS=,; echo "${seeds[*]}"
}

RABBIT_DIR=${NETNS_RABBIT_DIR:-/tmp/hmdp-netns-rabbit}
RABBIT_BIN=/usr/lib/rabbitmq/bin
rctl() {
  local n=$1; shift
  ip netns exec "$(ns "mq$n")" env HOME="$RABBIT_DIR" ERL_CRASH_DUMP=/dev/null RABBITMQ_CONF_ENV_FILE=/dev/null \
    "$RABBIT_BIN/rabbitmqctl" -q -n "rabbit@mq$n" "$@"
}
rabbit_start_node() {
  local n=$1 d="$RABBIT_DIR/mq$1"
  mkdir -p "$d"
  echo '[].' >"$d/enabled_plugins"
  printf 'listeners.tcp.default = %s:5672\nloopback_users = none\n' "$(addr "mq$n")" >"$d/rabbitmq.conf"
  # The Debian wrapper drops the environment when it switches user: call the real script.
  ip netns exec "$(ns "mq$n")" env HOME="$RABBIT_DIR" RABBITMQ_CONF_ENV_FILE=/dev/null RABBITMQ_CONFIG_FILE="$d/rabbitmq.conf" \
    RABBITMQ_NODENAME="rabbit@mq$n" RABBITMQ_NODE_PORT=5672 RABBITMQ_DIST_PORT=25672 \
    RABBITMQ_MNESIA_BASE="$d/mnesia" RABBITMQ_LOG_BASE="$d/log" RABBITMQ_ENABLED_PLUGINS_FILE="$d/enabled_plugins" \
    setsid "$RABBIT_BIN/rabbitmq-server" >"$d/stdout.log" 2>&1 </dev/null &
  echo $! >"$d/pid"
}
rabbit_up() {
  need_root
  [ -x "$RABBIT_BIN/rabbitmq-server" ] || { echo "✗ rabbitmq-server is missing (Debian: apt-get install rabbitmq-server)" >&2; exit 1; }
  rm -rf "$RABBIT_DIR"
  mkdir -p "$RABBIT_DIR"
  head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr a-f A-F >"$RABBIT_DIR/.erlang.cookie"
  chmod 400 "$RABBIT_DIR/.erlang.cookie"
  local n
  for n in 1 2 3; do rabbit_start_node "$n"; done
  for n in 1 2 3; do
    for _ in $(seq 1 300); do (exec 3<>"/dev/tcp/$(addr "mq$n")/5672") 2>/dev/null && break; sleep 0.2; done
    (exec 3<>"/dev/tcp/$(addr "mq$n")/5672") 2>/dev/null || { echo "✗ rabbitmq on mq$n did not start (see $RABBIT_DIR/mq$n/log)" >&2; exit 1; }
  done
  for n in 2 3; do rctl "$n" stop_app; rctl "$n" join_cluster rabbit@mq1; rctl "$n" start_app; done
  for _ in $(seq 1 100); do [ "$(rctl 1 eval 'length(rabbit_nodes:all_running()).' 2>/dev/null)" = 3 ] && break; sleep 0.2; done
  [ "$(rctl 1 eval 'length(rabbit_nodes:all_running()).' 2>/dev/null)" = 3 ] || { echo "✗ mq1..mq3 did not form one cluster" >&2; exit 1; }
  echo "✓ RabbitMQ cluster on mq1..mq3"
  echo "amqp://guest:guest@$(addr mq1):5672,amqp://guest:guest@$(addr mq2):5672,amqp://guest:guest@$(addr mq3):5672"
}
rabbit_kill() {
  local pid; pid=$(cat "$RABBIT_DIR/mq$1/pid" 2>/dev/null || true)
  # The server script runs the Erlang VM as its child: kill the whole process group it leads.
  [ -n "$pid" ] && kill -9 -- "-$pid" 2>/dev/null || true
  echo "✓ rabbit@mq$1 killed"
}

action=${1:-}
shift || true
case "$action" in
  up) up "$@" ;;
  down) down ;;
  ip) addr "$1" ;;
  cut) cut "$1" "$2" ;;
  heal) if [ $# -ge 2 ]; then heal_pair "$1" "$2"; else heal_all; fi ;;
  cuts) cuts ;;
  redis) redis_up ;;
  rabbit) rabbit_up ;;
  rabbit-kill) rabbit_kill "$1" ;;
  rabbitmqctl) rctl "$@" ;;
  run)
    need_root
    trap down EXIT
    up
    "$@"
    ;;
  *) sed -n '2,20p' "$0" >&2; exit 1 ;;
esac
