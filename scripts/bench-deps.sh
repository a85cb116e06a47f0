#!/usr/bin/env bash
# npm run bench needs wrk (the load generator of the grab scenario) and nginx (the front of the
# grab scenario's --shape b). Installs what is missing on Debian/Ubuntu as root; elsewhere says
# what is missing. The other scenarios run without them.
set -euo pipefail
missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "… installing ${missing[*]} for the bench"
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
  # The package starts a system nginx on port 80; the bench runs its own.
  if [[ " ${missing[*]} " == *" nginx-light "* ]]; then (service nginx stop || nginx -s stop) >/dev/null 2>&1 || true; fi
else
  echo "! missing for the bench: ${missing[*]} (Debian/Ubuntu: apt-get install ${missing[*]}; macOS: brew install wrk nginx)" >&2
fi
