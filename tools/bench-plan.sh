#!/usr/bin/env bash
# Measures the provider at scale: plan and apply of N jobs (default 200) against a local daemon,
# with the local OpenTofu binary (tools/tofu.sh, or $TOFU). It builds schedulerd and the
# provider, starts the daemon on a free port with a fresh data directory, and times:
#   apply (create N jobs), plan right after (refresh of N jobs: must be empty),
#   plan -refresh=false, apply (update of N jobs), destroy.
#
#   tools/bench-plan.sh [N] [PARALLELISM]        (default 200 and tofu's default 10)
#
# SCHEDULERD=path uses a prebuilt daemon instead of building ./controlplane/cmd/schedulerd.
set -euo pipefail
n=${1:-200}
par=${2:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tofu=${TOFU:-$(tools/tofu.sh)}
work=$(mktemp -d)
daemon=""
cleanup() {
  if [ -n "$daemon" ]; then kill "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

if [ -n "${SCHEDULERD:-}" ]; then
  mkdir -p "$work/bin" && cp "$SCHEDULERD" "$work/bin/schedulerd"
else
  go build -o "$work/bin/schedulerd" ./controlplane/cmd/schedulerd
fi
go build -o "$work/plugins/terraform-provider-scheduler" .
token=bench-token-0123456789abcdef0123456789abcdef
SCHEDULERD_ADMIN_TOKEN="$token" "$work/bin/schedulerd" serve --listen 127.0.0.1:0 --data "$work/data" --log-level warn \
  >"$work/schedulerd.log" 2>&1 &
daemon=$!
for _ in $(seq 1 300); do [ -s "$work/data/listen-address" ] && break; sleep 0.1; done
[ -s "$work/data/listen-address" ] || { cat "$work/schedulerd.log" >&2; echo "schedulerd did not start" >&2; exit 1; }
export SCHEDULER_ENDPOINT="http://$(cat "$work/data/listen-address")" SCHEDULER_TOKEN="$token"

cat >"$work/tofurc" <<CONF
provider_installation {
  dev_overrides {
    "registry.opentofu.org/schedulerhq/scheduler" = "$work/plugins"
  }
  direct {}
}
CONF
export TF_CLI_CONFIG_FILE="$work/tofurc" TF_IN_AUTOMATION=1
mkdir "$work/cfg"
config() { # $1: the hour jobs run at (changing it updates every job)
  cat >"$work/cfg/main.tf" <<HCL
terraform {
  required_providers {
    scheduler = { source = "schedulerhq/scheduler" }
  }
}

resource "scheduler_job_collection" "bench" {
  name = "bench"
  sku  = "P20Premium"
}

resource "scheduler_job" "job" {
  count             = $n
  job_collection_id = scheduler_job_collection.bench.id
  name              = "job-\${count.index}"
  start_time        = "2030-01-01T00:00:00"
  action {
    type = "Https"
    request {
      uri     = "https://example.com/hooks/\${count.index}"
      method  = "POST"
      headers = { "Content-Type" = "application/json" }
      body    = jsonencode({ job = count.index })
    }
    retry_policy {
      retry_type     = "Fixed"
      retry_interval = "PT1M"
      retry_count    = 3
    }
  }
  recurrence {
    frequency = "Week"
    time_zone = "Europe/Berlin"
    schedule {
      week_days = ["Monday", "Wednesday", "Friday"]
      hours     = [$1]
      minutes   = [count.index % 60]
    }
  }
}
HCL
}

TIMEFORMAT=%R
measure() { # $1: label; rest: command. Prints "label  seconds".
  local label=$1
  shift
  local secs
  secs=$( { time "$@" >"$work/last.log" 2>&1; } 2>&1 ) || { cat "$work/last.log" >&2; exit 1; }
  printf '%-44s %8ss\n' "$label" "$secs"
}

cd "$work/cfg"
echo "tofu $("$tofu" version | head -1 | cut -d' ' -f2), $n jobs, -parallelism=$par, $(nproc) CPUs"
config 2
measure "apply: create $n jobs" "$tofu" apply -auto-approve -parallelism="$par" -no-color
measure "plan after apply (refresh $n jobs)" "$tofu" plan -detailed-exitcode -parallelism="$par" -no-color
grep -q "No changes" "$work/last.log" || { cat "$work/last.log"; echo "plan after apply is not empty" >&2; exit 1; }
measure "plan -refresh=false" "$tofu" plan -refresh=false -parallelism="$par" -no-color
config 3
measure "plan: update $n jobs" "$tofu" plan -parallelism="$par" -no-color
grep -q "$n to change" "$work/last.log" || { cat "$work/last.log"; echo "expected $n updates" >&2; exit 1; }
measure "apply: update $n jobs" "$tofu" apply -auto-approve -parallelism="$par" -no-color
measure "destroy $n jobs" "$tofu" destroy -auto-approve -parallelism="$par" -no-color
