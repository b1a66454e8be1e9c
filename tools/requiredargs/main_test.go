package main

import "testing"

func TestRewrite(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"a nested block's required arguments", "### Nested Schema for `action.request`\n\nOptional:\n\n" +
			"> **NOTE**: write-only.\n\n" +
			"- `body` (String) Request body.\n" +
			"- `method` (String) Required. HTTP method.\n" +
			"- `uri` (String) Required. Absolute URI.\n\n" +
			"<a id=\"x\"></a>\n",
			"### Nested Schema for `action.request`\n\nRequired:\n\n" +
				"- `method` (String) HTTP method.\n" +
				"- `uri` (String) Absolute URI.\n\n" +
				"Optional:\n\n" +
				"> **NOTE**: write-only.\n\n" +
				"- `body` (String) Request body.\n\n" +
				"<a id=\"x\"></a>\n"},
		{"merged into the section's Required list; a required block", "## Schema\n\nRequired:\n\n- `name` (String) Name.\n\n" +
			"Optional:\n\n- `action` (Block, Optional) What the job does. Required. (see [below for nested schema](#a))\n- `state` (String) State.\n\n" +
			"Read-Only:\n\n- `id` (String) Id.\n",
			"## Schema\n\nRequired:\n\n- `name` (String) Name.\n- `action` (Block, Required) What the job does. (see [below for nested schema](#a))\n\n" +
				"Optional:\n\n- `state` (String) State.\n\n" +
				"Read-Only:\n\n- `id` (String) Id.\n"},
		{"the resource's own lists", "## Schema\n\n### Required\n\n- `name` (String) Name.\n\n### Optional\n\n" +
			"- `action` (Block, Optional) What the job does. Required. (see [below for nested schema](#a))\n- `state` (String) State.\n\n" +
			"### Read-Only\n\n- `id` (String) Id.\n",
			"## Schema\n\n### Required\n\n- `name` (String) Name.\n- `action` (Block, Required) What the job does. (see [below for nested schema](#a))\n\n" +
				"### Optional\n\n- `state` (String) State.\n\n" +
				"### Read-Only\n\n- `id` (String) Id.\n"},
		{"only required ones: no Optional list left", "### Nested Schema for `q`\n\nOptional:\n\n- `day` (String) Required. Day.\n",
			"### Nested Schema for `q`\n\nRequired:\n\n- `day` (String) Day.\n"},
		{"one of two is not required", "Optional:\n\n- `password` (String, Sensitive) Required: this or `password_wo`. Password.\n",
			"Optional:\n\n- `password` (String, Sensitive) Required: this or `password_wo`. Password.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Rewrite(tc.in); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
