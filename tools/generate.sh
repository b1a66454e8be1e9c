#!/usr/bin/env bash
# Renders docs/ from templates/ and examples/ with tfplugindocs (pinned in go.mod through
# tools/tools.go), offline: the provider's schema comes from the local OpenTofu binary
# (tools/tofu.sh, or $TOFU) through a dev_overrides CLI configuration, so tfplugindocs neither
# downloads Terraform nor builds the provider itself. It first checks that every example is
# formatted and valid against the provider's schema.
#
#   tools/generate.sh          (what `make generate` runs)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# The examples import by identity: OpenTofu 1.12 or later, so the pinned one (built once).
tofu=${TOFU:-$(TOFU_BUILD=1 tools/tofu.sh)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/bin/terraform-provider-scheduler" .
# tfplugindocs finds the schema under registry.terraform.io/hashicorp/<name>.
cat >"$work/tofurc" <<CONF
provider_installation {
  dev_overrides {
    "registry.terraform.io/hashicorp/scheduler" = "$work/bin"
    "registry.terraform.io/schedulerhq/scheduler" = "$work/bin"
  }
  direct {}
}
CONF
export TF_CLI_CONFIG_FILE="$work/tofurc"
mkdir "$work/schema"
cat >"$work/schema/main.tf" <<'HCL'
terraform {
  required_providers {
    scheduler = { source = "registry.terraform.io/hashicorp/scheduler" }
  }
}
HCL
(cd "$work/schema" && "$tofu" providers schema -json 2>"$work/schema.log") >"$work/schema.json" ||
  { cat "$work/schema.log" >&2; exit 1; }

"$tofu" fmt -check -recursive examples >/dev/null 2>"$work/fmt.log" ||
  { cat "$work/fmt.log" >&2; echo "examples/ is not formatted: run '$tofu fmt -recursive examples'" >&2; exit 1; }
for dir in examples/provider examples/resources/* examples/data-sources/* examples/functions/*; do
  mkdir -p "$work/validate/$dir"
  cp "$dir"/*.tf "$work/validate/$dir/"
  # Examples use the registry address; validate them against the binary just built.
  sed -i 's#source = "schedulerhq/scheduler"#source = "registry.terraform.io/schedulerhq/scheduler"#' "$work/validate/$dir"/*.tf
  if ! grep -q required_providers "$work/validate/$dir"/*.tf; then
    printf 'terraform {\n  required_providers {\n    scheduler = { source = "registry.terraform.io/schedulerhq/scheduler" }\n  }\n}\n' >"$work/validate/$dir/zz_provider.tf"
  fi
  (cd "$work/validate/$dir" && "$tofu" validate -no-color >"$work/validate.log" 2>&1) ||
    { cat "$work/validate.log" >&2; echo "$dir: invalid example" >&2; exit 1; }
done

go run github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs generate \
  --provider-name scheduler --rendered-provider-name Scheduler --providers-schema "$work/schema.json"
# The arguments of nested blocks that must be set whenever their block is written are listed
# under "Required" (the schema cannot mark them so: see tools/requiredargs).
go run ./tools/requiredargs docs/resources/*.md docs/data-sources/*.md
