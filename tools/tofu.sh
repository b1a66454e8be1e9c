#!/usr/bin/env bash
# Prints the path of the tofu (or terraform) binary the acceptance tests and the demo drive, and
# says on stderr which one it is. In order:
#   1. $TOFU, when set: that binary, whatever its version;
#   2. the pinned OpenTofu already built in the cache (${SCHEDULER_CACHE:-$HOME/.cache/scheduler});
#   3. a `tofu` on PATH at version $TOFU_MIN or later (earlier ones crash on -generate-config-out);
#   4. a `terraform` on PATH at version $TERRAFORM_MIN or later (provider-defined functions);
#   5. otherwise it builds the pinned OpenTofu from the Go module proxy into the cache, once:
#      about 10 minutes on 2 cores, with progress on stderr. TOFU_BUILD=1 skips 3 and 4.
# Override the pinned version with TOFU_VERSION.
set -euo pipefail
version="${TOFU_VERSION:-v1.12.6}"
tofu_min="${TOFU_MIN:-1.11.5}"
terraform_min="${TERRAFORM_MIN:-1.8.0}"
cache="${SCHEDULER_CACHE:-$HOME/.cache/scheduler}"
bin="$cache/tofu-$version/tofu"

say() { echo "tofu.sh: $*" >&2; }

# version_of BINARY prints the version the binary reports ("1.12.6"), or nothing. The version line
# need not come first: tofu prints CLI configuration warnings before it.
version_of() {
  "$1" version 2>/dev/null | sed -n 's/^\(OpenTofu\|Terraform\) v\([0-9][0-9.]*\).*/\2/p' | head -n1
}

# at_least A B: version A >= version B.
at_least() {
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]
}

if [ -n "${TOFU:-}" ]; then
  path=$(command -v "$TOFU") || { say "TOFU=$TOFU is not an executable"; exit 1; }
  say "using $path ($("$path" version 2>/dev/null | head -n1), from TOFU)"
  echo "$path"
  exit 0
fi
if [ -x "$bin" ] && "$bin" version >/dev/null 2>&1; then
  say "using $bin (OpenTofu $version, built earlier)"
  echo "$bin"
  exit 0
fi
if [ -z "${TOFU_BUILD:-}" ]; then
  for candidate in tofu terraform; do
    path=$(command -v "$candidate" 2>/dev/null) || continue
    v=$(version_of "$path")
    min=$tofu_min
    [ "$candidate" = terraform ] && min=$terraform_min
    if [ -n "$v" ] && at_least "$v" "$min"; then
      say "using $path ($candidate $v from PATH; TOFU_BUILD=1 builds OpenTofu $version instead)"
      echo "$path"
      exit 0
    fi
    say "not using $path: $candidate ${v:-of unknown version} is older than $min"
  done
fi

mkdir -p "$cache"
work=$(mktemp -d "$cache/tofu-build.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
started=$(date +%s)
elapsed() { local s=$(($(date +%s) - started)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
say "no tofu >= $tofu_min or terraform >= $terraform_min on PATH: building OpenTofu $version from the Go module proxy"
say "this happens once (cached in $cache) and takes about 10 minutes on 2 cores, 3 to 4 on 8"
say "[1/3] downloading the OpenTofu $version module..."
dir=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "github.com/opentofu/opentofu@$version" \
  | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] || { say "could not download github.com/opentofu/opentofu@$version"; exit 1; }
cp -r "$dir" "$work/src"
chmod -R u+w "$work/src"
say "[2/3] downloading its dependencies ($(elapsed) so far)..."
total=$(cd "$work/src" && go list -deps ./cmd/tofu | wc -l)
say "[3/3] compiling $total packages ($(elapsed) so far); a line per 10%:"
mkdir -p "$(dirname "$bin")"
# go build -v names each package it compiles (cached ones are skipped, so the count may stop
# short of the total on a warm cache).
if ! (cd "$work/src" && CGO_ENABLED=0 go build -v -trimpath -ldflags "-s -w" -o "$bin.tmp" ./cmd/tofu) 2>&1 |
  awk -v total="$total" -v start="$started" '
    /^(go: |#|[^ ]*\.go:)/ { print > "/dev/stderr"; next }
    {
      n++
      pct = int(100 * n / total)
      if (pct >= next_pct) {
        srand(); now = srand()  # srand() seeds with the time and returns the previous seed
        printf "tofu.sh:   %3d%% (%d/%d packages, %ds)\n", pct, n, total, now - start > "/dev/stderr"
        next_pct = pct - pct % 10 + 10
      }
    }' || [ ! -x "$bin.tmp" ]; then
  say "building OpenTofu $version failed"
  exit 1
fi
mv "$bin.tmp" "$bin"
say "built $bin in $(elapsed)"
echo "$bin"
