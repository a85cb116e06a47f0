#!/usr/bin/env bash
# Installs npm dependencies when node_modules is missing or older than package-lock.json, and
# writes .env.local with a fresh AUTH_SECRET when there is none. Safe to run any number of times.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null; then echo "✗ Node.js 20+ is required (https://nodejs.org)" >&2; exit 1; fi
if [ ! -d node_modules ]; then
  echo "… installing npm dependencies (npm ci)"
  # A fresh checkout installs exactly the lock (every platform's optional binaries are in it) and
  # leaves it untouched. npm ci refuses a lock out of step with package.json; then npm install.
  npm ci --no-audit --no-fund --loglevel=error \
    || { echo "… package-lock.json is out of step with package.json: npm install"; npm install --no-audit --no-fund --loglevel=error; }
elif [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "… updating npm dependencies"
  npm install --no-audit --no-fund --loglevel=error
fi
if ! grep -qs '^AUTH_SECRET=' .env.local; then
  echo "AUTH_SECRET=$(node -e 'console.log(require("crypto").randomBytes(32).toString("base64url"))')" >> .env.local
  echo "✓ generated AUTH_SECRET into .env.local"
fi
if ! grep -qs '^ALLOW_DEV_SMS_IN_PRODUCTION=' .env.local; then
  # npm run up serves a production build, and this local demo has no SMS gateway: codes go to the log.
  printf '# local demo: no SMS gateway, codes are logged and kept at dev:sms:{phone}\nALLOW_DEV_SMS_IN_PRODUCTION=true\n' >> .env.local
fi
if ! grep -qs '^ALLOW_DEV_PAYMENT_IN_PRODUCTION=' .env.local; then
  # Same for payments: the local demo "pays" through the dev provider, which moves no money.
  printf '# local demo: no payment gateway, the dev provider pays with no money\nALLOW_DEV_PAYMENT_IN_PRODUCTION=true\n' >> .env.local
fi
