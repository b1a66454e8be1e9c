#!/usr/bin/env bash
# Builds the schedulerd container image from deploy/Dockerfile and prints its name.
#   IMAGE       the name to tag (default schedulerd:dev)
#   IMAGE_TOOL  podman (default) or docker
# The build pulls nothing: the static binary (CGO_ENABLED=0) is built here, on the host, and put
# with deploy/image/ (passwd, group), the host's CA bundle (for HTTPS targets) and an empty data/
# into a build context for the single-stage `FROM scratch` Dockerfile.
set -euo pipefail
cd "$(dirname "$0")/.."
image="${IMAGE:-schedulerd:dev}"
tool="${IMAGE_TOOL:-podman}"
say() { echo "image.sh: $*" >&2; }

command -v "$tool" >/dev/null || { say "$tool is not installed (Debian: apt-get install -y podman)"; exit 1; }
ca=""
for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem; do
  if [ -f "$f" ]; then ca=$f; break; fi
done
[ -n "$ca" ] || { say "no CA bundle found on this host (Debian: apt-get install -y ca-certificates)"; exit 1; }

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
cp -R deploy/image/. "$ctx/"
mkdir -p "$ctx/etc/ssl/certs" "$ctx/data"
cp "$ca" "$ctx/etc/ssl/certs/ca-certificates.crt"
chmod 0644 "$ctx"/etc/passwd "$ctx"/etc/group "$ctx/etc/ssl/certs/ca-certificates.crt"
say "building the static schedulerd"
CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$ctx/schedulerd" ./controlplane/cmd/schedulerd
format=()
# podman writes OCI images by default, which have no HEALTHCHECK: ask for Docker's format.
[ "$tool" = podman ] && format=(--format docker)
say "building $image with $tool"
"$tool" build "${format[@]}" --quiet -f deploy/Dockerfile -t "$image" "$ctx" >&2
echo "$image"
