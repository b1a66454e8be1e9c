#!/usr/bin/env bash
# Checks deploy/schedulerd.service (or the unit given) without a running systemd:
#   1. the hardening the deployment guide promises is there (DynamicUser, StateDirectory,
#      ProtectSystem=strict, NoNewPrivileges, an empty CapabilityBoundingSet, LoadCredential);
#   2. `systemd-analyze verify` accepts it with no warning at all (a mistyped directive or
#      specifier is only a warning to systemd), with ExecStart pointed at a freshly built daemon
#      (verify insists that the command exists);
#   3. `systemd-analyze security --offline=true` rates its exposure at most $MAX_EXPOSURE (2.5).
set -euo pipefail
cd "$(dirname "$0")/.."
unit="${1:-deploy/schedulerd.service}"
max="${MAX_EXPOSURE:-2.5}"
say() { echo "unit-check: $*" >&2; }
command -v systemd-analyze >/dev/null || { say "systemd-analyze is not installed (Debian: apt-get install -y systemd)"; exit 1; }

fail=0
for want in 'DynamicUser=yes' 'StateDirectory=schedulerd' 'ProtectSystem=strict' 'NoNewPrivileges=yes' \
  'CapabilityBoundingSet=' 'LoadCredential=admin-token:' 'Environment=SCHEDULERD_ADMIN_TOKEN_FILE=%d/admin-token'; do
  if ! grep -q "^${want}" "$unit"; then
    say "$unit: no line starting with $want"
    fail=1
  fi
done
if grep -q '^CapabilityBoundingSet=.' "$unit"; then
  say "$unit: CapabilityBoundingSet must be empty"
  fail=1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -o "$work/schedulerd" ./controlplane/cmd/schedulerd
sed "s|^ExecStart=/usr/local/bin/schedulerd|ExecStart=$work/schedulerd|" "$unit" > "$work/schedulerd.service"
if ! out=$(systemd-analyze verify --man=no "$work/schedulerd.service" 2>&1) || [ -n "$out" ]; then
  say "systemd-analyze verify $unit:"
  echo "$out" >&2
  fail=1
fi

threshold=$(awk -v m="$max" 'BEGIN { printf "%d", m * 10 + 0.5 }')
if ! out=$(systemd-analyze security --offline=true --no-pager --threshold="$threshold" "$unit" 2>&1); then
  say "systemd-analyze security $unit: exposure above $max"
  fail=1
fi
score=$(echo "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
say "$unit: exposure ${score:-unknown} (at most $max)"
[ -n "$score" ] || { echo "$out" >&2; fail=1; }
exit "$fail"
