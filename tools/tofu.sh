#!/usr/bin/env bash
# Prints the path of an OpenTofu binary, building it from the Go module proxy on first use.
# The binary is cached outside the repository (${SCHEDULER_CACHE:-$HOME/.cache/scheduler}) and
# reused on the next run. Override the version with TOFU_VERSION.
set -euo pipefail
version="${TOFU_VERSION:-v1.10.6}"
cache="${SCHEDULER_CACHE:-$HOME/.cache/scheduler}"
bin="$cache/tofu-$version/tofu"
if [ -x "$bin" ] && "$bin" version >/dev/null 2>&1; then
  echo "$bin"
  exit 0
fi
mkdir -p "$cache"
work=$(mktemp -d "$cache/tofu-build.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
echo "building OpenTofu $version from the Go module proxy (first run only)..." >&2
dir=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "github.com/opentofu/opentofu@$version" \
  | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] || { echo "tofu.sh: could not download github.com/opentofu/opentofu@$version" >&2; exit 1; }
cp -r "$dir" "$work/src"
chmod -R u+w "$work/src"
mkdir -p "$(dirname "$bin")"
(cd "$work/src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin.tmp" ./cmd/tofu) >&2
mv "$bin.tmp" "$bin"
echo "$bin"
