#!/usr/bin/env bash
# Checks .goreleaser.yml the way the Terraform and OpenTofu registries will read its output:
#   1. `goreleaser check` accepts the configuration;
#   2. a snapshot release (signing and publishing skipped) builds the provider and the daemon for
#      the platforms in $RELEASE_TARGETS (default: three, one per archive format and OS family;
#      RELEASE_TARGETS=all builds every platform of the configuration, about 20 builds);
#   3. its output is what a registry expects: one terraform-provider-scheduler_V_OS_ARCH.zip per
#      platform holding exactly terraform-provider-scheduler_vV(.exe), a V_manifest.json equal to
#      terraform-registry-manifest.json, and a V_SHA256SUMS that lists every zip and the manifest
#      and verifies;
#   4. CHANGELOG.md is in the format the registries show (tools/changelog-check.sh).
# goreleaser is installed with `go install` into ${SCHEDULER_CACHE:-~/.cache/scheduler} on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${GORELEASER_VERSION:-v2.12.7}"
cache="${SCHEDULER_CACHE:-$HOME/.cache/scheduler}"
gr="$cache/goreleaser-$version/goreleaser"
targets="${RELEASE_TARGETS:-linux_amd64 darwin_arm64 windows_amd64}"
say() { echo "release-check: $*" >&2; }

if [ ! -x "$gr" ]; then
  say "installing goreleaser $version into $cache (once: a few minutes)"
  GOBIN="$(dirname "$gr")" go install "github.com/goreleaser/goreleaser/v2@$version"
fi
"$gr" check
tools/changelog-check.sh CHANGELOG.md # the registries show it: HashiCorp's provider changelog format

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
config="$work/goreleaser.yml"
cp .goreleaser.yml "$config"
if [ "$targets" != all ]; then
  # The same configuration, each build narrowed to the chosen targets of its operating systems
  # (goos/goarch/ignore replaced by a targets list).
  awk -v want="$targets" '
    /^    ignore:/ { skip = 1; next }
    skip && /^      / { next }
    { skip = 0 }
    /^    goarch: / { next }
    /^    goos: / {
      line = $0; sub(/^    goos: *\[/, "", line); sub(/\].*/, "", line); gsub(/[ "]/, "", line)
      n = split(line, oses, ","); split(want, ts, " "); out = ""
      for (i in ts) { split(ts[i], p, "_"); for (j = 1; j <= n; j++) if (p[1] == oses[j]) out = out (out == "" ? "" : ", ") "\"" ts[i] "\"" }
      print "    targets: [" out "]"; next
    }
    { print }' "$config" > "$config.new"
  mv "$config.new" "$config"
fi
dist="$work/dist"
echo "dist: $dist" >> "$config"
"$gr" release --snapshot --clean --skip=sign,publish,before --config "$config" \
  --parallelism 2 2>&1 | sed 's/^/  /' >&2

name=terraform-provider-scheduler
ver=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' $dist/metadata.json)
[ -n "$ver" ] || { say "no version in $dist/metadata.json"; exit 1; }
fail=0
if [ "$targets" = all ]; then
  targets=$(ls "$dist"/${name}_"$ver"_*.zip | sed "s|$dist/${name}_${ver}_||; s|\.zip$||")
fi
for t in $targets; do
  zip="$dist/${name}_${ver}_${t}.zip"
  want="${name}_v${ver}"
  case "$t" in windows_*) want="$want.exe" ;; esac
  if [ ! -f "$zip" ]; then say "missing $zip"; fail=1; continue; fi
  got=$(unzip -Z1 "$zip" | grep -v -e '^README' -e '^LICENSE' -e '^CHANGELOG' | tr '\n' ' ')
  if [ "$got" != "$want " ]; then say "$zip holds '$got', want '$want'"; fail=1; fi
  grep -q "  ${name}_${ver}_${t}.zip\$" "$dist/${name}_${ver}_SHA256SUMS" || { say "SHA256SUMS does not list $zip"; fail=1; }
done
# The manifest is uploaded beside the archives by the release (release.extra_files, skipped in a
# snapshot): SHA256SUMS must list it under its release name with the checksum of
# terraform-registry-manifest.json.
want_manifest="$(sha256sum terraform-registry-manifest.json | cut -d' ' -f1)  ${name}_${ver}_manifest.json"
grep -qx "$want_manifest" "$dist/${name}_${ver}_SHA256SUMS" ||
  { say "SHA256SUMS does not list terraform-registry-manifest.json as ${name}_${ver}_manifest.json"; fail=1; }
cp terraform-registry-manifest.json "$dist/${name}_${ver}_manifest.json"
(cd "$dist" && sha256sum --quiet --strict -c "${name}_${ver}_SHA256SUMS") || { say "SHA256SUMS does not verify"; fail=1; }
say "$(grep -c '' "$dist/${name}_${ver}_SHA256SUMS") checksummed files for ${ver}: $(echo $targets | wc -w) provider platforms checked"
exit "$fail"
