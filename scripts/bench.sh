#!/usr/bin/env bash
# npm run bench: the bench's tools (scripts/bench-deps.sh), then the runner with the open-files
# limit raised to the hard limit, because the real-concurrency spike holds one socket per user in
# its client processes and in each web process (e2e/bench/scenarios/spike.ts checks it can).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bench-deps.sh
hard=$(ulimit -Hn)
if [ "$hard" = unlimited ]; then hard=$(cat /proc/sys/fs/nr_open); fi
ulimit -n "$hard" 2>/dev/null || echo "! could not raise the open-files limit (now $(ulimit -n))" >&2
exec npx tsx e2e/bench/run.ts "$@"
