package provider

import (
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// dataSourceAttr turns a resource schema attribute into the data source's: all computed (the
// data source reads it) when computed is set, else with the same requiredness and validators.
// The data sources thus describe a job exactly as scheduler_job does.
func dataSourceAttr(a rschema.Attribute, computed bool) dschema.Attribute {
	req := func(required, optional, comp bool) (bool, bool, bool) {
		if computed {
			return false, false, true
		}
		return required, optional, comp
	}
	switch x := a.(type) {
	case rschema.StringAttribute:
		out := dschema.StringAttribute{Sensitive: x.Sensitive, MarkdownDescription: x.MarkdownDescription}
		out.Required, out.Optional, out.Computed = req(x.Required, x.Optional, x.Computed)
		if !computed {
			out.Validators = x.Validators
		}
		return out
	case rschema.Int64Attribute:
		out := dschema.Int64Attribute{Sensitive: x.Sensitive, MarkdownDescription: x.MarkdownDescription}
		out.Required, out.Optional, out.Computed = req(x.Required, x.Optional, x.Computed)
		if !computed {
			out.Validators = x.Validators
		}
		return out
	case rschema.BoolAttribute:
		out := dschema.BoolAttribute{Sensitive: x.Sensitive, MarkdownDescription: x.MarkdownDescription}
		out.Required, out.Optional, out.Computed = req(x.Required, x.Optional, x.Computed)
		return out
	case rschema.ListAttribute:
		out := dschema.ListAttribute{ElementType: x.ElementType, Sensitive: x.Sensitive, MarkdownDescription: x.MarkdownDescription}
		out.Required, out.Optional, out.Computed = req(x.Required, x.Optional, x.Computed)
		if !computed {
			out.Validators = x.Validators
		}
		return out
	case rschema.MapAttribute:
		out := dschema.MapAttribute{ElementType: x.ElementType, Sensitive: x.Sensitive, MarkdownDescription: x.MarkdownDescription}
		out.Required, out.Optional, out.Computed = req(x.Required, x.Optional, x.Computed)
		return out
	case rschema.SingleNestedAttribute:
		out := dschema.SingleNestedAttribute{Attributes: dataSourceAttrs(x.Attributes, computed), Sensitive: x.Sensitive, MarkdownDescription: x.MarkdownDescription}
		out.Required, out.Optional, out.Computed = req(x.Required, x.Optional, x.Computed)
		if !computed {
			out.Validators = x.Validators
		}
		return out
	case rschema.ListNestedAttribute:
		out := dschema.ListNestedAttribute{
			NestedObject:        dschema.NestedAttributeObject{Attributes: dataSourceAttrs(x.NestedObject.Attributes, computed)},
			Sensitive:           x.Sensitive,
			MarkdownDescription: x.MarkdownDescription,
		}
		out.Required, out.Optional, out.Computed = req(x.Required, x.Optional, x.Computed)
		return out
	}
	panic("dataSourceAttr: unsupported attribute type") // a schema bug, caught by the schema tests
}

func dataSourceAttrs(m map[string]rschema.Attribute, computed bool) map[string]dschema.Attribute {
	out := make(map[string]dschema.Attribute, len(m))
	for k, a := range m {
		out[k] = dataSourceAttr(a, computed)
	}
	return out
}
