#!/usr/bin/env bash
# Runs every test LLeMbas has, on a fresh machine: first installs what the
# tests need (Debian's Chromium for the browser tests), then checks
# formatting, vet and staticcheck, then runs the whole suite with the race
# detector. Usage: scripts/test.sh [extra go test flags]
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
[ -x /usr/lib/chromium/chromium ] || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "==> installing ${need_apt[*]}"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

echo "==> gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "==> go vet"
go vet ./...

echo "==> staticcheck"
go tool staticcheck ./...

echo "==> go test -race"
go test -race -count=1 "$@" ./...
