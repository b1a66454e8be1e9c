#!/usr/bin/env bash
# Prints the path of Azurite's queue service (azurite-queue), installing the npm package
# `azurite` on first use into a cache outside the repository
# (${SCHEDULER_CACHE:-$HOME/.cache/scheduler}/azurite-$version) and reusing it on the next run.
# Override the version with AZURITE_VERSION. The tests start it themselves on a free port.
set -euo pipefail
version="${AZURITE_VERSION:-3.35.0}"
cache="${SCHEDULER_CACHE:-$HOME/.cache/scheduler}"
dir="$cache/azurite-$version"
bin="$dir/node_modules/.bin/azurite-queue"
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
command -v npm >/dev/null || { echo "azurite.sh: npm is required (Node.js 18 or later)" >&2; exit 1; }
mkdir -p "$cache"
work=$(mktemp -d "$cache/azurite-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "installing azurite@$version from npm (first run only)..." >&2
(cd "$work" && npm install --no-audit --no-fund --loglevel=error "azurite@$version" >&2)
rm -rf "$dir"
mv "$work" "$dir"
trap - EXIT
echo "$bin"
