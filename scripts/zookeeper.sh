#!/usr/bin/env bash
# A standalone ZooKeeper on loopback for the `nodes: 'zookeeper'` lock and its tests, never the
# system service on 2181. Data, config, log and pid live in .run/zookeeper-<port>/ (gitignored).
#   zookeeper.sh start [port=2281] [tickMs=200]  installs Debian's zookeeper when missing, starts
#                                                 the server unless it already answers; keeps its data
#   zookeeper.sh stop  [port=2281]               SIGKILLs it (a crash: the data stays for a restart)
#   zookeeper.sh fresh [port=2281] [tickMs=200]  stop, wipe the data, start
#   zookeeper.sh install                         only install it (the tests start their own servers)
#   zookeeper.sh ensemble-fresh base [n=3] [tickMs=200]
#                                                 an ensemble of n servers on loopback, empty data: server
#                                                 i (1..n) serves clients on base+i-1, talks to its peers on
#                                                 base+n+i-1 and votes on base+2n+i-1 (so ports base..base+3n-1);
#                                                 prints the connect string once every member serves
#   zookeeper.sh ensemble-stop base [n=3]        SIGKILLs every server of it
#   zookeeper.sh leader base [n=3]               prints the client port of its current leader
# A member of an ensemble is crashed and started again (it rejoins on its data) with
# `stop <client port>` / `start <client port>`.
# The shortest session a client may ask for is 2 ticks and the longest 20, so tests use a small tick.
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=${1:-start}
port=${2:-2281}
tick=${3:-200}
dir=.run/zookeeper-$port
jar=/usr/share/java/zookeeper.jar

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }
# Listening is not serving yet (it first loads its data): `srvr` names its mode once it serves.
serving() { (exec 3<>"/dev/tcp/127.0.0.1/$port" && echo srvr >&3 && timeout 2 cat <&3) 2>/dev/null | grep -q '^Mode:'; }

install_zookeeper() {
  [ -f $jar ] && command -v java >/dev/null && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "… installing zookeeper with apt-get" >&2
    apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 zookeeper >/dev/null
  else
    echo "✗ ZooKeeper is not installed (Debian: apt-get install zookeeper)" >&2
    exit 1
  fi
}

stop() {
  if [ -f "$dir/pid" ]; then
    kill -9 "$(cat "$dir/pid")" 2>/dev/null || true
    rm -f "$dir/pid"
  fi
  for _ in $(seq 50); do listening || return 0; sleep 0.1; done
  echo "✗ something else still listens on 127.0.0.1:$port" >&2
  exit 1
}

write_standalone_config() {
  cat >"$dir/zoo.cfg" <<EOF
tickTime=$tick
dataDir=$PWD/$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,stat,cons,dump
EOF
}

# Launches the server of $dir in the background (its zoo.cfg already written). No systemd, no
# /etc/zookeeper: the server class straight from Debian's jar; a member of an ensemble runs QuorumPeerMain.
launch() {
  local main=org.apache.zookeeper.server.ZooKeeperServerMain
  grep -q '^server\.' "$dir/zoo.cfg" && main=org.apache.zookeeper.server.quorum.QuorumPeerMain
  nohup java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp /etc/zookeeper/conf:$jar $main \
    "$PWD/$dir/zoo.cfg" >"$dir/server.log" 2>&1 </dev/null &
  echo $! >"$dir/pid"
}

wait_serving() {
  for _ in $(seq 600); do
    if serving; then echo "127.0.0.1:$port"; return 0; fi
    kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
    sleep 0.1
  done
  tail -20 "$dir/server.log" >&2
  echo "✗ ZooKeeper did not start on 127.0.0.1:$port" >&2
  exit 1
}

start() {
  install_zookeeper
  if serving; then echo "127.0.0.1:$port"; return 0; fi
  mkdir -p "$dir/data"
  # A member of an ensemble keeps its ensemble config (it rejoins); anything else runs standalone.
  grep -qs '^server\.' "$dir/zoo.cfg" || write_standalone_config
  launch
  wait_serving
}

# Every member stopped and wiped, then all launched, then all waited for.
ensemble_fresh() {
  local base=$1 n=$2 i servers=''
  install_zookeeper
  for i in $(seq 1 "$n"); do servers+="server.$i=127.0.0.1:$((base + n + i - 1)):$((base + 2 * n + i - 1))"$'\n'; done
  for i in $(seq 1 "$n"); do
    port=$((base + i - 1)); dir=.run/zookeeper-$port
    stop
    rm -rf "$dir"; mkdir -p "$dir/data"
    echo "$i" >"$dir/data/myid"
    cat >"$dir/zoo.cfg" <<EOF
tickTime=$tick
initLimit=20
syncLimit=5
dataDir=$PWD/$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
reconfigEnabled=false
4lw.commands.whitelist=ruok,srvr,stat,cons,dump
$servers
EOF
  done
  # A member serves only once a quorum has formed, so none is waited for before all are launched.
  for i in $(seq 1 "$n"); do port=$((base + i - 1)); dir=.run/zookeeper-$port; launch; done
  local connect=()
  for i in $(seq 1 "$n"); do port=$((base + i - 1)); dir=.run/zookeeper-$port; connect+=("$(wait_serving)"); done
  (IFS=,; echo "${connect[*]}")
}

ensemble_stop() {
  local base=$1 n=$2 i
  for i in $(seq 1 "$n"); do port=$((base + i - 1)); dir=.run/zookeeper-$port; stop; done
}

leader() {
  local base=$1 n=$2 i
  for i in $(seq 1 "$n"); do
    port=$((base + i - 1))
    if (exec 3<>"/dev/tcp/127.0.0.1/$port" && echo srvr >&3 && timeout 2 cat <&3) 2>/dev/null | grep -q '^Mode: leader'; then echo "$port"; return 0; fi
  done
  echo "✗ no leader among 127.0.0.1:$base..$((base + n - 1))" >&2
  exit 1
}

case $cmd in
  start) start ;;
  stop) stop ;;
  fresh) stop; rm -rf "$dir/data"; start ;;
  install) install_zookeeper ;;
  ensemble-fresh) tick=${4:-200}; ensemble_fresh "$port" "${3:-3}" ;;
  ensemble-stop) ensemble_stop "$port" "${3:-3}" ;;
  leader) leader "$port" "${3:-3}" ;;
  *) echo "usage: zookeeper.sh start|stop|fresh|install [port] [tickMs] | ensemble-fresh base [n] [tickMs] | ensemble-stop base [n] | leader base [n]" >&2; exit 2 ;;
esac
