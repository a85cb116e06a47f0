#!/usr/bin/env bash
# A standalone ZooKeeper on loopback for the `nodes: 'zookeeper'` lock and its tests, never the
# system service on 2181. Data, config, log and pid live in .run/zookeeper-<port>/ (gitignored).
#   zookeeper.sh start [port=2281] [tickMs=200]  installs Debian's zookeeper when missing, starts
#                                                 the server unless it already answers; keeps its data
#   zookeeper.sh stop  [port=2281]               SIGKILLs it (a crash: the data stays for a restart)
#   zookeeper.sh fresh [port=2281] [tickMs=200]  stop, wipe the data, start
#   zookeeper.sh install                         only install it (the tests start their own servers)
# The shortest session a client may ask for is 2 ticks, so tests use a small tick.
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

start() {
  install_zookeeper
  if serving; then echo "127.0.0.1:$port"; return 0; fi
  mkdir -p "$dir/data"
  cat >"$dir/zoo.cfg" <<EOF
tickTime=$tick
dataDir=$PWD/$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,stat,cons,dump
EOF
  # No systemd, no /etc/zookeeper: the server class straight from Debian's jar, in the background.
  nohup java -Xmx256m -cp /etc/zookeeper/conf:$jar org.apache.zookeeper.server.ZooKeeperServerMain \
    "$PWD/$dir/zoo.cfg" >"$dir/server.log" 2>&1 </dev/null &
  echo $! >"$dir/pid"
  for _ in $(seq 600); do
    if serving; then echo "127.0.0.1:$port"; return 0; fi
    kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
    sleep 0.1
  done
  tail -20 "$dir/server.log" >&2
  echo "✗ ZooKeeper did not start on 127.0.0.1:$port" >&2
  exit 1
}

case $cmd in
  start) start ;;
  stop) stop ;;
  fresh) stop; rm -rf "$dir/data"; start ;;
  install) install_zookeeper ;;
  *) echo "usage: zookeeper.sh start|stop|fresh|install [port] [tickMs]" >&2; exit 2 ;;
esac
