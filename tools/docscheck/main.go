// Command docscheck keeps the documentation true: every relative link (and its #anchor) in the
// Markdown files given resolves, and every flag of `schedulerd serve --help` appears in the
// operating guide. `make docs-check` runs it.
//
//	go run ./tools/docscheck [-schedulerd BIN -flags-guide FILE] PATH...
//
// A PATH is a Markdown file or a directory searched for *.md files.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

func main() {
	bin := flag.String("schedulerd", "", "a schedulerd binary: every flag of its `serve --help` must appear in -flags-guide")
	guide := flag.String("flags-guide", "docs/guides/operating.md", "the guide that lists every serve flag")
	flag.Parse()
	var problems []string
	files, err := markdownFiles(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "docscheck:", err)
		os.Exit(2)
	}
	for _, f := range files {
		ps, err := checkLinks(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "docscheck:", err)
			os.Exit(2)
		}
		problems = append(problems, ps...)
	}
	if *bin != "" {
		ps, err := checkFlags(*bin, *guide)
		if err != nil {
			fmt.Fprintln(os.Stderr, "docscheck:", err)
			os.Exit(2)
		}
		problems = append(problems, ps...)
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "docscheck: %d problem(s) in the documentation\n", len(problems))
		os.Exit(1)
	}
	fmt.Printf("docscheck: %d files, links and flags true\n", len(files))
}

// markdownFiles lists the Markdown files of paths (files as given, directories searched).
func markdownFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("stat: %w", err)
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".md") {
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("walk %s: %w", p, err)
		}
	}
	return out, nil
}

var (
	linkRE       = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpanRE   = regexp.MustCompile("`[^`]*`")
	headingRE    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	slugDropRE   = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	serveFlagsRE = regexp.MustCompile(`^\s+-([a-z0-9][a-z0-9-]*)`)
	htmlAnchorRE = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
)

// prose returns the lines of a Markdown file outside fenced code blocks, with their numbers.
func prose(b []byte) ([]string, []int) {
	var lines []string
	var nums []int
	fence := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			fence = trimmed[:3]
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		lines, nums = append(lines, line), append(nums, n)
	}
	return lines, nums
}

// anchors are the GitHub-style ids of a Markdown file's headings and its HTML anchors
// (<a id="...">, which tfplugindocs writes for nested attributes).
func anchors(b []byte) map[string]bool {
	lines, _ := prose(b)
	m := map[string]bool{}
	seen := map[string]int{}
	for _, l := range lines {
		for _, a := range htmlAnchorRE.FindAllStringSubmatch(l, -1) {
			m[a[1]] = true
		}
		h := headingRE.FindStringSubmatch(l)
		if h == nil {
			continue
		}
		slug := strings.ToLower(strings.ReplaceAll(h[1], "`", ""))
		slug = strings.ReplaceAll(slugDropRE.ReplaceAllString(slug, ""), " ", "-")
		if k := seen[slug]; k > 0 {
			m[fmt.Sprintf("%s-%d", slug, k)] = true
		} else {
			m[slug] = true
		}
		seen[slug]++
	}
	return m
}

// checkLinks reports the relative links of file that do not resolve.
func checkLinks(file string) ([]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	var problems []string
	lines, nums := prose(b)
	for i, line := range lines {
		for _, m := range linkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(line, "``"), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			resolved := file
			if path != "" {
				resolved = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(resolved); err != nil {
					problems = append(problems, fmt.Sprintf("%s:%d: link %s: %s does not exist", file, nums[i], target, resolved))
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(resolved, ".md") {
				continue
			}
			tb, err := os.ReadFile(resolved)
			if err != nil {
				return nil, fmt.Errorf("read: %w", err)
			}
			if !anchors(tb)[anchor] {
				problems = append(problems, fmt.Sprintf("%s:%d: link %s: %s has no heading #%s", file, nums[i], target, resolved, anchor))
			}
		}
	}
	return problems, nil
}

// checkFlags reports the flags of `bin serve --help` that guide does not name as `--flag`.
func checkFlags(bin, guide string) ([]string, error) {
	out, err := exec.Command(bin, "serve", "--help").CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return nil, fmt.Errorf("%s serve --help: %w", bin, err)
	}
	var flags []string
	for _, line := range strings.Split(string(out), "\n") {
		if m := serveFlagsRE.FindStringSubmatch(line); m != nil && !slices.Contains(flags, m[1]) {
			flags = append(flags, m[1])
		}
	}
	if len(flags) == 0 {
		return nil, fmt.Errorf("%s serve --help listed no flags:\n%s", bin, out)
	}
	g, err := os.ReadFile(guide)
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	var problems []string
	for _, f := range flags {
		if !bytes.Contains(g, []byte("`--"+f+"`")) {
			problems = append(problems, fmt.Sprintf("%s: the flag --%s of `schedulerd serve --help` is not in the guide (as `--%s`)", guide, f, f))
		}
	}
	return problems, nil
}
