package provider

import (
	"regexp"
	"strings"

	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// requiredPrefix is the start of a description saying an argument is required ("Required. ",
// "Required: this or `password_wo`. ").
var requiredPrefix = regexp.MustCompile(`^Required(\. |: [^.]*\. )`)

// dataSourceAttr turns a resource schema attribute into the data source's: all computed (the
// data source reads it) when computed is set, else with the same requiredness and validators.
// The data sources thus describe a job exactly as scheduler_job does.
func dataSourceAttr(a rschema.Attribute, computed bool) dschema.Attribute {
	// "Required." in a description says an argument must be set in its block: not read.
	desc := func(d string) string {
		if computed {
			return strings.TrimSuffix(requiredPrefix.ReplaceAllString(d, ""), " Required.")
		}
		return d
	}
	req := func(required, optional, comp bool) (bool, bool, bool) {
		if computed {
			return false, false, true
		}
		return required, optional, comp
	}
	switch x := a.(type) {
	case rschema.StringAttribute:
		// The same type: the data source reads into the resource's model.
		out := dschema.StringAttribute{CustomType: x.CustomType, Sensitive: x.Sensitive, MarkdownDescription: desc(x.MarkdownDescription)}
		out.Required, out.Optional, out.Computed = req(x.Required, x.Optional, x.Computed)
		if !computed {
			out.Validators = x.Validators
		}
		return out
	case rschema.Int64Attribute:
		out := dschema.Int64Attribute{Sensitive: x.Sensitive, MarkdownDescription: desc(x.MarkdownDescription)}
		out.Required, out.Optional, out.Computed = req(x.Required, x.Optional, x.Computed)
		if !computed {
			out.Validators = x.Validators
		}
		return out
	case rschema.BoolAttribute:
		out := dschema.BoolAttribute{Sensitive: x.Sensitive, MarkdownDescription: desc(x.MarkdownDescription)}
		out.Required, out.Optional, out.Computed = req(x.Required, x.Optional, x.Computed)
		return out
	case rschema.ListAttribute:
		out := dschema.ListAttribute{ElementType: x.ElementType, Sensitive: x.Sensitive, MarkdownDescription: desc(x.MarkdownDescription)}
		out.Required, out.Optional, out.Computed = req(x.Required, x.Optional, x.Computed)
		if !computed {
			out.Validators = x.Validators
		}
		return out
	case rschema.MapAttribute:
		out := dschema.MapAttribute{ElementType: x.ElementType, Sensitive: x.Sensitive, MarkdownDescription: desc(x.MarkdownDescription)}
		out.Required, out.Optional, out.Computed = req(x.Required, x.Optional, x.Computed)
		return out
	case rschema.SingleNestedAttribute:
		out := dschema.SingleNestedAttribute{Attributes: dataSourceAttrs(x.Attributes, computed), Sensitive: x.Sensitive, MarkdownDescription: desc(x.MarkdownDescription)}
		out.Required, out.Optional, out.Computed = req(x.Required, x.Optional, x.Computed)
		if !computed {
			out.Validators = x.Validators
		}
		return out
	case rschema.ListNestedAttribute:
		out := dschema.ListNestedAttribute{
			NestedObject:        dschema.NestedAttributeObject{Attributes: dataSourceAttrs(x.NestedObject.Attributes, computed)},
			Sensitive:           x.Sensitive,
			MarkdownDescription: desc(x.MarkdownDescription),
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
		if computed && (a.IsWriteOnly() || strings.HasSuffix(k, versionSuffix)) {
			// A secret's write-only form and its version are the configuration's: never read.
			out[k] = dataSourceAttr(writeOnlyAsRead(a), computed)
		}
	}
	return out
}

// writeOnlyAsRead is a write-only attribute or a write-only version as a data source shows it:
// always null.
func writeOnlyAsRead(a rschema.Attribute) rschema.Attribute {
	const desc = "Always null: the write-only form of a secret, and its version, are never read."
	switch x := a.(type) {
	case rschema.StringAttribute:
		return rschema.StringAttribute{Sensitive: x.Sensitive, MarkdownDescription: desc}
	case rschema.Int64Attribute:
		return rschema.Int64Attribute{MarkdownDescription: desc}
	}
	return a
}

// dataSourceBlockAttr turns a resource schema block into a computed nested attribute of a data
// source that reads it (a block cannot be computed); its value has the block's type.
func dataSourceBlockAttr(b rschema.Block) dschema.Attribute {
	switch x := b.(type) {
	case rschema.SingleNestedBlock:
		return dschema.SingleNestedAttribute{
			Attributes:          dataSourceBlockAttrs(x.Attributes, x.Blocks),
			Computed:            true,
			MarkdownDescription: strings.TrimSuffix(x.MarkdownDescription, " Required."),
		}
	case rschema.ListNestedBlock:
		return dschema.ListNestedAttribute{
			NestedObject:        dschema.NestedAttributeObject{Attributes: dataSourceBlockAttrs(x.NestedObject.Attributes, x.NestedObject.Blocks)},
			Computed:            true,
			MarkdownDescription: x.MarkdownDescription,
		}
	}
	panic("dataSourceBlockAttr: unsupported block type") // a schema bug, caught by the schema tests
}

// dataSourceBlockAttrs is the computed attributes of a block's attributes and nested blocks.
func dataSourceBlockAttrs(attrs map[string]rschema.Attribute, blocks map[string]rschema.Block) map[string]dschema.Attribute {
	out := dataSourceAttrs(attrs, true)
	for k, b := range blocks {
		out[k] = dataSourceBlockAttr(b)
	}
	return out
}

// dataSourceBlock turns a resource schema block into the same block of a data source that
// takes it as configuration (scheduler_occurrences' recurrence), validators included.
func dataSourceBlock(b rschema.Block) dschema.Block {
	switch x := b.(type) {
	case rschema.SingleNestedBlock:
		return dschema.SingleNestedBlock{
			Attributes:          dataSourceAttrs(x.Attributes, false),
			Blocks:              dataSourceBlocks(x.Blocks),
			Validators:          x.Validators,
			MarkdownDescription: x.MarkdownDescription,
		}
	case rschema.ListNestedBlock:
		return dschema.ListNestedBlock{
			NestedObject: dschema.NestedBlockObject{
				Attributes: dataSourceAttrs(x.NestedObject.Attributes, false),
				Blocks:     dataSourceBlocks(x.NestedObject.Blocks),
			},
			Validators:          x.Validators,
			MarkdownDescription: x.MarkdownDescription,
		}
	}
	panic("dataSourceBlock: unsupported block type") // a schema bug, caught by the schema tests
}

func dataSourceBlocks(m map[string]rschema.Block) map[string]dschema.Block {
	out := make(map[string]dschema.Block, len(m))
	for k, b := range m {
		out[k] = dataSourceBlock(b)
	}
	return out
}
