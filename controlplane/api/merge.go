package api

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// mergeInto applies a JSON merge patch (RFC 7396: objects merge member by member, null removes
// a member, anything else replaces) onto base and strictly decodes the result into out. Member
// names match case-insensitively, as the API's do, and keep base's spelling.
func mergeInto(base any, patch map[string]any, out any) error {
	b, err := json.Marshal(base)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	merged := mergePatch(doc, patch)
	b, err = json.Marshal(merged)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	return wire.Decode(b, out)
}

// mergePatch merges patch onto target (which it may modify) and returns the result.
func mergePatch(target any, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		key := k
		for tk := range t {
			if strings.EqualFold(tk, k) {
				key = tk
				break
			}
		}
		if v == nil {
			delete(t, key)
			continue
		}
		t[key] = mergePatch(t[key], v)
	}
	return t
}

// member returns the member of an object named name (case-insensitively).
func member(m map[string]any, name string) (any, bool) {
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

// object returns the object at a path of member names, nil when any is absent or not an object.
func object(m map[string]any, path ...string) map[string]any {
	for _, name := range path {
		v, ok := member(m, name)
		if !ok {
			return nil
		}
		m, ok = v.(map[string]any)
		if !ok {
			return nil
		}
	}
	return m
}
