#!/usr/bin/env bash
# npm run up — everything on a fresh machine: dependencies, services, schema, demo data, build,
# then web + worker in the foreground. Ctrl-C stops both. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
bash scripts/services.sh
npm run -s db:migrate
npm run -s db:seed

# Rebuild only when a source file is newer than the last build.
if [ ! -f .next/BUILD_ID ] || [ -n "$(find app lib lua public next.config.js package-lock.json -newer .next/BUILD_ID -print -quit 2>/dev/null)" ]; then
  echo "… building the web app (about a minute)"
  mkdir -p .run  # this checkout's own log (gitignored): two checkouts never write one file
  npx next build >.run/build.log 2>&1 || { tail -40 .run/build.log; echo "✗ build failed (full log: .run/build.log)" >&2; exit 1; }
fi
if [ -f scripts/cache-warm.ts ]; then npm run -s cache:warm || echo "! cache warm-up failed; pages fill the cache on first read"; fi

PORT=$(node -e 'console.log(process.env.PORT||3000)')
# Loopback unless told otherwise; a wider HOST is refused while the demo passwords or the dev SMS
# provider are still in place (scripts/listen-guard.ts says why).
HOST=$(node -e 'console.log(process.env.HOST||"127.0.0.1")')
NODE_ENV=production node_modules/.bin/tsx scripts/listen-guard.ts
if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
  echo "✗ port $PORT is already in use (another hmdp-next?). Stop it or run: PORT=3001 npm run up" >&2
  exit 1
fi

# The console's live grab rate (/admin/vouchers/{id}/live) reads the web server's metrics port, on
# its own port, never the public one. On by default only on loopback (the port listens on HOST:
# a wider HOST opts in by setting it), and unless the environment or a local env file says otherwise.
case "$HOST" in 127.0.0.1|localhost|::1) loopback=1 ;; *) loopback=0 ;; esac
if [ $loopback = 1 ] && [ -z "${WEB_METRICS_PORT:-}" ] && ! grep -qs '^WEB_METRICS_PORT=' .env.local .env; then export WEB_METRICS_PORT=9465; fi

# Binaries directly (not `npm run`), so SIGTERM reaches the processes themselves.
pids=()
stop() {
  trap - INT TERM EXIT
  echo; echo "… stopping web and worker"
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 1 60); do
    alive=0; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break; sleep 0.2
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
  echo "✓ stopped"
}
trap stop INT TERM EXIT

# The web server: hot routes on bare node:http, the rest through Next (WEB_CONCURRENCY processes).
NODE_ENV=production HOST="$HOST" PORT="$PORT" node --import tsx workers/web-server.ts & pids+=($!)
NODE_ENV=production node_modules/.bin/tsx workers/background.ts & pids+=($!)

healthy=0
for _ in $(seq 1 120); do
  curl -fs "http://127.0.0.1:$PORT/api/health" >/dev/null 2>&1 && { healthy=1; break; }
  kill -0 "${pids[0]}" 2>/dev/null || break
  sleep 0.5
done
if [ $healthy = 0 ]; then
  echo "✗ the web server did not become healthy; see the log above (and GET /api/health)" >&2
  exit 1
fi
cat <<MSG

  hmdp-next is running:  http://localhost:$PORT
  admin console:         http://localhost:$PORT/admin
MSG
if [ -n "${WEB_METRICS_PORT:-}" ] && [ "$WEB_METRICS_PORT" != 0 ]; then
  echo "  web metrics:           http://127.0.0.1:$WEB_METRICS_PORT/metrics (not the public port)"
fi
cat <<MSG

  consumer  any phone (e.g. 13912345678) → 获取验证码; there is no SMS gateway in this demo:
            the code is printed in the log ("dev sms: login code") and kept at dev:sms:{phone}
  merchant  13800000001 / merchant123   (a second merchant: 13800000002 / merchant123)
  admin     13800000000 / admin123

  Ctrl-C stops web and worker.
MSG
wait -n "${pids[@]}"
