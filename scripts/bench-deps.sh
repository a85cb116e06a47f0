#!/usr/bin/env bash
# npm run bench needs wrk (the load generator of the grab scenario). Installs it on Debian/Ubuntu
# as root; elsewhere says what is missing. The other scenarios run without it.
set -euo pipefail
command -v wrk >/dev/null && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "… installing wrk for the bench"
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 wrk >/dev/null
else
  echo "! wrk is not installed (Debian/Ubuntu: apt-get install wrk; macOS: brew install wrk); the grab scenario needs it" >&2
fi
