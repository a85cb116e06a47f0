#!/usr/bin/env bash
# Finds or starts MySQL/MariaDB, Redis and RabbitMQ for this project, in this order of preference:
#   1. already listening at the URL from the environment (or .env.local, or the defaults)
#   2. installed locally but stopped → start it
#   3. Debian/Ubuntu as root → apt-get install, then start
#   4. a Docker engine → docker compose up -d (docker-compose.yml)
#   5. otherwise: say exactly what is missing and exit 1
set -euo pipefail
cd "$(dirname "$0")/.."
# `services.sh cluster [stop]`: a local 3 + 3 Redis Cluster instead (scripts/redis-cluster.sh).
if [ "${1:-}" = cluster ]; then exec bash scripts/redis-cluster.sh "${2:-start}"; fi
# `services.sh zookeeper [start|stop|fresh] [port]`: a loopback ZooKeeper for the ZooKeeper lock
# (scripts/zookeeper.sh; installs Debian's package when missing). The plain command never starts it.
if [ "${1:-}" = zookeeper ]; then exec bash scripts/zookeeper.sh "${2:-start}" "${3:-2281}"; fi

# Read a variable from the environment, then .env.local / .env, then a default.
setting() {
  local name=$1 def=$2 v="${!1:-}"
  if [ -z "$v" ]; then
    for f in .env.local .env; do
      [ -f "$f" ] && v=$(grep -E "^${name}=" "$f" | tail -1 | cut -d= -f2- | sed -e 's/^"//' -e 's/"$//') && [ -n "$v" ] && break
    done
  fi
  echo "${v:-$def}"
}
hostport() { # URL → "host port"
  node -e 'const u=new URL(process.argv[1]);console.log(u.hostname, u.port||process.argv[2])' "$1" "$2"
}
listening() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
wait_port() { # host port name seconds
  local i
  for ((i = 0; i < $4 * 5; i++)); do listening "$1" "$2" && return 0; sleep 0.2; done
  echo "✗ $3 did not start listening on $1:$2 within $4 s" >&2
  return 1
}
is_local() { [[ "$1" == 127.* || "$1" == localhost || "$1" == "::1" ]]; }
is_root() { [ "$(id -u)" = 0 ]; }
have() { command -v "$1" >/dev/null 2>&1; }
APT_UPDATED=0
apt_install() {
  is_root && have apt-get || return 1
  if [ $APT_UPDATED = 0 ]; then apt-get update -qq >/dev/null; APT_UPDATED=1; fi
  echo "  installing $* with apt-get…"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
docker_up() {
  have docker && docker info >/dev/null 2>&1 || return 1
  echo "  starting $1 with docker compose…"
  docker compose up -d "$1" >/dev/null
}

start_mysql() {
  if ! have mariadbd && ! have mysqld; then apt_install mariadb-server || return 1; fi
  if have mariadbd; then
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
    start-stop-daemon --start --oknodo --background --exec "$(command -v mariadbd)" -- --user=mysql
  else
    (mysqld_safe >/dev/null 2>&1 &)
  fi
  wait_port "$1" "$2" MySQL 60
  # Fresh Debian installs let root in only over the unix socket; the app connects over TCP.
  if have mariadb && is_root; then
    mariadb -uroot -e "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('') OR unix_socket" 2>/dev/null || true
  fi
}
start_redis() {
  have redis-server || apt_install redis-server || return 1
  mkdir -p /var/lib/redis 2>/dev/null || true
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$2" --dir /var/lib/redis --appendonly yes --appendfsync everysec \
    --maxmemory-policy noeviction --logfile /tmp/hmdp-redis.log
  wait_port "$1" "$2" Redis 20
}
start_rabbitmq() {
  have rabbitmq-server || apt_install rabbitmq-server || return 1
  rabbitmq-server -detached >/dev/null 2>&1 || true
  wait_port "$1" "$2" RabbitMQ 90
}

ensure() { # name url defaultPort starter composeService
  local name=$1 url=$2 port=$3 starter=$4 service=$5 h p
  read -r h p < <(hostport "$url" "$port")
  if listening "$h" "$p"; then echo "✓ $name at $h:$p"; return 0; fi
  if ! is_local "$h"; then echo "✗ $name is not reachable at $h:$p (from its URL); start it or fix the URL" >&2; return 1; fi
  echo "… $name is not running on $h:$p; starting it"
  if "$starter" "$h" "$p" || docker_up "$service"; then
    listening "$h" "$p" && { echo "✓ $name started at $h:$p"; return 0; }
  fi
  echo "✗ could not start $name: install it (Debian: apt-get install $service-server), run Docker, or point the URL at a running one" >&2
  return 1
}

ok=0
ensure MySQL "$(setting DATABASE_URL mysql://root@127.0.0.1:3306/hmdp)" 3306 start_mysql mariadb || ok=1
ensure Redis "$(setting REDIS_URL redis://127.0.0.1:6379/0)" 6379 start_redis redis || ok=1
ensure RabbitMQ "$(setting RABBITMQ_URL amqp://guest:guest@127.0.0.1:5672)" 5672 start_rabbitmq rabbitmq || ok=1

# Seckill keys must never be evicted (docs/security.md#redis-keys). Only touch a local server.
if have redis-cli && [ $ok = 0 ]; then
  read -r rh rp < <(hostport "$(setting REDIS_URL redis://127.0.0.1:6379/0)" 6379)
  if is_local "$rh"; then redis-cli -h "$rh" -p "$rp" CONFIG SET maxmemory-policy noeviction >/dev/null 2>&1 || true; fi
fi
exit $ok
