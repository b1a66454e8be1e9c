#!/usr/bin/env bash
# The demo: starts a daemon on its embedded store and a local webhook receiver, applies
# examples/demo with a real tofu, waits until the jobs fire, then shows their status, history and
# next occurrences. Everything lives in examples/demo/.demo (git-ignored).
#   tools/demo.sh         run it (bin/ must hold schedulerd and the provider: `make demo` builds them)
#   tools/demo.sh stop    stop the daemon and the receiver it left running
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
demo="$root/examples/demo"
work="$demo/.demo"
bin="$root/bin"

stop() {
  for name in schedulerd receiver; do
    if [ -f "$work/$name.pid" ]; then
      pid=$(cat "$work/$name.pid")
      if kill "$pid" 2>/dev/null; then echo "stopped $name (pid $pid)"; fi
      rm -f "$work/$name.pid"
    fi
  done
}

if [ "${1:-}" = "stop" ]; then
  stop
  exit 0
fi

wait_for_file() { # path timeout-seconds
  local i=0
  until [ -s "$1" ]; do
    i=$((i + 1))
    if [ "$i" -gt $(($2 * 10)) ]; then echo "demo: timed out waiting for $1" >&2; exit 1; fi
    sleep 0.1
  done
}

stop >/dev/null 2>&1 || true
rm -rf "$work"
mkdir -p "$work/tf" "$work/data"

echo "== obtaining tofu (tofu or terraform from PATH when recent enough, else built once from the Go module proxy)"
tofu=$("$root/tools/tofu.sh")
"$tofu" version | head -1

echo "== starting the webhook receiver"
go build -o "$bin/receiver" "$root/examples/demo/receiver"
"$bin/receiver" --listen 127.0.0.1:0 --log "$work/receiver.log" --address-file "$work/receiver-address" \
  >"$work/receiver.out" 2>&1 &
echo $! >"$work/receiver.pid"
wait_for_file "$work/receiver-address" 20
receiver="http://$(cat "$work/receiver-address")"
echo "receiver: $receiver (log: $work/receiver.log)"

echo "== starting schedulerd on its embedded store"
# No --admin-token: the daemon generates one into <data>/admin-token (mode 0600), so the token is
# never on a command line; it is read from that file into the environment of tofu below.
"$bin/schedulerd" serve --listen 127.0.0.1:0 --data "$work/data" \
  >"$work/schedulerd.log" 2>&1 &
echo $! >"$work/schedulerd.pid"
wait_for_file "$work/data/listen-address" 30
wait_for_file "$work/data/admin-token" 30
token_file="$work/data/admin-token"
token=$(cat "$token_file")
endpoint="http://$(cat "$work/data/listen-address")"
echo "schedulerd: $endpoint (log: $work/schedulerd.log, data: $work/data)"
echo "dashboard:  $endpoint/ui/ (sign in with the admin token in $token_file)"

cat >"$work/tofurc" <<RC
provider_installation {
  dev_overrides {
    "schedulerhq/scheduler" = "$bin"
  }
  direct {}
}
RC
export TF_CLI_CONFIG_FILE="$work/tofurc" TF_IN_AUTOMATION=1
export SCHEDULER_ENDPOINT="$endpoint" SCHEDULER_TOKEN="$token"
cp "$demo"/*.tf "$work/tf/"

echo "== tofu apply examples/demo"
"$tofu" -chdir="$work/tf" apply -auto-approve -compact-warnings -var "receiver_url=$receiver"

echo "== waiting for the jobs to fire (the every-minute job fires within a minute)"
want=2
for _ in $(seq 1 150); do
  got=$(wc -l <"$work/receiver.log" 2>/dev/null || echo 0)
  [ "$got" -ge "$want" ] && break
  sleep 1
done
got=$(wc -l <"$work/receiver.log")
echo "the receiver got $got deliveries:"
cat "$work/receiver.log"
[ "$got" -ge "$want" ] || { echo "demo: expected at least $want deliveries" >&2; exit 1; }

echo "== status, history and next occurrences"
"$tofu" -chdir="$work/tf" apply -refresh-only -auto-approve -compact-warnings -var "receiver_url=$receiver" >/dev/null
"$tofu" -chdir="$work/tf" output

cat <<MSG

The daemon and the receiver are still running:
  Dashboard: $endpoint/ui/
             sign in with the admin token in $token_file
             (paste it into the form; it is never put in a URL)
  API:       $endpoint   (the same token: SCHEDULER_TOKEN="\$(cat $token_file)")
  try:       curl -s -H "Authorization: Bearer \$(cat $token_file)" "$endpoint/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/demo/jobs?api-version=2016-03-01"
  tofu:      TF_CLI_CONFIG_FILE=$work/tofurc SCHEDULER_ENDPOINT=$endpoint SCHEDULER_TOKEN="\$(cat $token_file)" $tofu -chdir=$work/tf plan -var receiver_url=$receiver
Stop them with:  tools/demo.sh stop
MSG
