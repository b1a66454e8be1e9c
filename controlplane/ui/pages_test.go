package ui

import (
	"net/http"
	"testing"
)

// TestPagesParsedOnFirstUse: a dashboard nobody opened holds no parsed templates; each page is
// parsed by the first request that renders it, once.
func TestPagesParsedOnFirstUse(t *testing.T) {
	h := newHarness(t, false)
	if n := h.ui.pages.parsedCount(); n != 0 {
		t.Fatalf("%d pages parsed before any request, want 0", n)
	}
	b := h.browser()
	if p := b.get("/ui/signin"); p.status != http.StatusOK {
		t.Fatalf("sign-in form: %d", p.status)
	}
	if n := h.ui.pages.parsedCount(); n != 1 {
		t.Fatalf("%d pages parsed after the sign-in form, want 1", n)
	}
	signin, err := h.ui.pages.get("signin")
	if err != nil {
		t.Fatal(err)
	}
	if p := b.get("/ui/signin"); p.status != http.StatusOK {
		t.Fatalf("sign-in form again: %d", p.status)
	}
	again, err := h.ui.pages.get("signin")
	if err != nil {
		t.Fatal(err)
	}
	if again != signin {
		t.Error("the sign-in page was parsed again")
	}
	b.signIn(adminToken)
	if p := b.get("/ui/"); p.status != http.StatusOK {
		t.Fatalf("overview: %d", p.status)
	}
	if n := h.ui.pages.parsedCount(); n != 2 {
		t.Fatalf("%d pages parsed after the overview, want 2", n)
	}
}

// TestEveryPageParses: the embedded templates of every page parse (they are parsed on first
// use, so a broken one would otherwise show only when someone opens that page).
func TestEveryPageParses(t *testing.T) {
	h := newHarness(t, false)
	for _, page := range pageNames {
		tmpl, err := h.ui.pages.get(page)
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		if tmpl.Lookup("layout") == nil {
			t.Errorf("%s: no layout template", page)
		}
	}
	if n := h.ui.pages.parsedCount(); n != len(pageNames) {
		t.Fatalf("%d pages parsed, want %d", n, len(pageNames))
	}
}
