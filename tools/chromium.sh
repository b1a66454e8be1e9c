#!/usr/bin/env bash
# Installs Debian's Chromium (for the dashboard's browser tests) when it is not installed yet and
# prints its path. Idempotent: a second run only prints the path. Needs root or sudo for apt-get.
set -euo pipefail
for c in "${CHROMIUM:-}" /usr/bin/chromium /usr/bin/chromium-browser; do
  if [ -n "$c" ] && [ -x "$c" ]; then
    echo "$c"
    exit 0
  fi
done
sudo=()
if [ "$(id -u)" != 0 ]; then
  sudo=(sudo -n)
fi
# Wait for another apt-get (up to 10 minutes) rather than fail on its lock.
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -q)
if ! apt-cache show chromium >/dev/null 2>&1; then
  "${apt[@]}" update >&2
fi
"${apt[@]}" install -y --no-install-recommends chromium fonts-dejavu-core >&2 || {
  "${apt[@]}" update >&2
  "${apt[@]}" install -y --no-install-recommends chromium fonts-dejavu-core >&2
}
echo /usr/bin/chromium
