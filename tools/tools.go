//go:build tools

// Package tools pins the Go tools the repository runs with `go run`, so that their versions are
// in go.mod: tfplugindocs renders docs/ (tools/generate.sh).
package tools

import (
	_ "github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs"
)
