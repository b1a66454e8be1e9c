// Command requiredargs lists the required arguments of nested blocks under "Required" in the
// Markdown tfplugindocs renders. An argument of a nested block the schema cannot mark Required
// (the framework would then demand it even when its block is left out) says so with a
// description that starts with "Required." (a block: that ends with "Required."); tfplugindocs
// lists it under "Optional". This moves each such line into a "Required:" list of its section,
// before "Optional:", without the word. tools/generate.sh runs it on docs/ after tfplugindocs.
//
//	go run ./tools/requiredargs FILE...
package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

func main() {
	for _, name := range os.Args[1:] {
		if err := rewriteFile(name); err != nil {
			fmt.Fprintln(os.Stderr, "requiredargs:", err)
			os.Exit(1)
		}
	}
}

func rewriteFile(name string) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	out := Rewrite(string(b))
	if out == string(b) {
		return nil
	}
	if err := os.WriteFile(name, []byte(out), 0o644); err != nil { //nolint:gosec // documentation, world-readable like the rest of the tree
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

var (
	// An argument: "- `uri` (String) Required. Absolute URI ...".
	requiredArg = regexp.MustCompile("^(- `[^`]+` \\([^)]*\\)) Required\\. (.*)$")
	// A block: "- `action` (Block, Optional) What the job does. Required. (see [below ...])".
	requiredBlock = regexp.MustCompile("^(- `[^`]+` )\\(Block, Optional\\) (.*?) Required\\.( \\(see .*)?$")
)

// titles maps the title of a list of optional arguments to that of the required ones: a nested
// block's ("Optional:") and the resource's ("### Optional").
var titles = map[string]string{"Optional:": "Required:", "### Optional": "### Required"}

// Rewrite moves the required arguments of every list of optional ones in md into the list of
// required ones of the same section (the one there, or a new one just before).
func Rewrite(md string) string {
	lines := strings.Split(md, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		reqTitle, ok := titles[lines[i]]
		if !ok {
			out = append(out, lines[i])
			continue
		}
		// The list runs from here to the next heading or list title.
		end := i + 1
		for end < len(lines) && !sectionEnd(lines[end]) {
			end++
		}
		var required, optional []string
		for _, l := range lines[i+1 : end] {
			if m := requiredArg.FindStringSubmatch(l); m != nil {
				required = append(required, m[1]+" "+m[2])
			} else if m := requiredBlock.FindStringSubmatch(l); m != nil {
				required = append(required, m[1]+"(Block, Required) "+m[2]+m[3])
			} else {
				optional = append(optional, l)
			}
		}
		if len(required) > 0 {
			out = addRequired(out, reqTitle, required)
		}
		if hasItems(optional) {
			out = append(out, lines[i])
			out = append(out, optional...)
		}
		i = end - 1
	}
	return strings.Join(out, "\n")
}

// addRequired adds items to the list titled title that out ends with, or starts one.
func addRequired(out []string, title string, items []string) []string {
	for j := len(out) - 1; j >= 0; j-- {
		if out[j] != title {
			if strings.HasPrefix(out[j], "#") || strings.HasPrefix(out[j], "<a id=") {
				break // another section
			}
			continue
		}
		end := len(out) // the list ends at its last item
		for end > j && !strings.HasPrefix(out[end-1], "- ") {
			end--
		}
		return append(append(append([]string{}, out[:end]...), items...), out[end:]...)
	}
	return append(out, append(append([]string{title, ""}, items...), "")...)
}

// sectionEnd reports whether l starts what follows a list: a heading, an anchor or another
// list's title.
func sectionEnd(l string) bool {
	return strings.HasPrefix(l, "#") || strings.HasPrefix(l, "<a id=") || (strings.HasSuffix(l, ":") && !strings.HasPrefix(l, "- ") && !strings.HasPrefix(l, ">"))
}

func hasItems(ls []string) bool {
	for _, l := range ls {
		if strings.HasPrefix(l, "- ") {
			return true
		}
	}
	return false
}
