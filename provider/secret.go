package provider

import (
	"reflect"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Every secret of a job (a password, a pfx, an OAuth secret, a SAS token, a Service Bus key) has
// three attributes:
//   - name: sensitive, hidden in plans but written to the state (for CLIs before write-only
//     attributes); setting it draws a plan-time warning recommending the write-only form;
//   - name_wo: write-only, sent to the API and never kept in the plan or the state (Terraform
//     1.11+, OpenTofu 1.11+);
//   - name_wo_version: changing it updates the job, and so sends the current name_wo.
//
// Exactly one of name and name_wo is set where the secret is required (the engine reports a
// missing one). Create and Update read the write-only values from the configuration
// (copyWriteOnly): the plan never holds them.

// writeOnlySuffix and versionSuffix name a secret's write-only form and its version.
const (
	writeOnlySuffix = "_wo"
	versionSuffix   = "_wo_version"
)

// secretAttributes adds the three attributes of the secret name to attrs; what says what it is
// ("Password."), required whether the block needs it.
func secretAttributes(attrs map[string]schema.Attribute, name, what string, required bool) {
	wo := name + writeOnlySuffix
	version := name + versionSuffix
	req, reqWO := "", ""
	if required {
		req, reqWO = "Required: this or `"+wo+"`. ", "Required: this or `"+name+"`. "
	}
	attrs[name] = schema.StringAttribute{
		Optional:  true,
		Sensitive: true,
		MarkdownDescription: req + what + " Hidden in plans but stored in the Terraform state: prefer `" + wo +
			"` with a CLI that has write-only attributes (Terraform 1.11+, OpenTofu 1.11+). Write-only in the API: kept from the configuration.",
		Validators: []validator.String{stringvalidator.ConflictsWith(path.MatchRelative().AtParent().AtName(wo))},
	}
	attrs[wo] = schema.StringAttribute{
		Optional:  true,
		Sensitive: true,
		WriteOnly: true,
		MarkdownDescription: reqWO + what + " Write-only: sent to the API, never stored in the plan or the state " +
			"(Terraform 1.11+, OpenTofu 1.11+). A new value is sent when `" + version + "` changes (or with any other change to the job).",
	}
	attrs[version] = schema.Int64Attribute{
		Optional:            true,
		MarkdownDescription: "Version of `" + wo + "`: change it (`1`, `2`, ...) to send the current `" + wo + "`.",
		Validators:          []validator.Int64{int64validator.AlsoRequires(path.MatchRelative().AtParent().AtName(wo))},
	}
}

// secret converts a secret's sensitive and write-only forms (at most one is set) to its wire
// value, noting which form is set.
func (c conv) secret(sensitive, writeOnly types.String, path string) string {
	switch {
	case !sensitive.IsNull():
		*c.sensitive = append(*c.sensitive, path)
		return c.str(sensitive, path)
	case !writeOnly.IsNull():
		*c.writeOnly = append(*c.writeOnly, path)
		return c.str(writeOnly, path)
	}
	*c.unset = append(*c.unset, path)
	return ""
}

// writeOnlyVersion keeps the version of a secret's write-only form from the plan or the state
// (the API knows nothing of it); null on import.
func writeOnlyVersion(prior types.Int64, fresh bool) types.Int64 {
	if fresh || prior.IsUnknown() {
		return types.Int64Null()
	}
	return prior
}

// copyWriteOnly copies the write-only values (fields whose tfsdk name ends in _wo) of the
// configuration src into the plan dst, which never holds them; both are the same model type and
// src's blocks are dst's (the plan is made from the configuration).
func copyWriteOnly(dst, src any) {
	copyWriteOnlyValue(reflect.ValueOf(dst), reflect.ValueOf(src))
}

func copyWriteOnlyValue(dst, src reflect.Value) {
	if dst.Kind() == reflect.Pointer {
		if dst.IsNil() || src.IsNil() {
			return
		}
		dst, src = dst.Elem(), src.Elem()
	}
	if dst.Kind() != reflect.Struct {
		return
	}
	t := dst.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case strings.HasSuffix(f.Tag.Get("tfsdk"), writeOnlySuffix):
			dst.Field(i).Set(src.Field(i))
		case f.Anonymous || (f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct && f.Type.Elem().Name() != ""):
			copyWriteOnlyValue(dst.Field(i), src.Field(i))
		}
	}
}

// writeOnlyPath is the path of the write-only form of the secret at p.
func writeOnlyPath(p path.Path) path.Path {
	return p.ParentPath().AtName(lastName(p) + writeOnlySuffix)
}

// lastName is the attribute name p ends with ("" when it ends with an index or key).
func lastName(p path.Path) string {
	last, _ := p.Steps().LastStep()
	if name, ok := last.(path.PathStepAttributeName); ok {
		return string(name)
	}
	return ""
}
