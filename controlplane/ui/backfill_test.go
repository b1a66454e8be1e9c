package ui

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// TestBackfillForm: the job page has a backfill form (from, to, the session's CSRF token, the
// job's zone); without the token it is refused and nothing is stored; with it the API stores the
// range's occurrences (read in the job's zone) and the answer says how many; a second one while
// the first is unfinished, and a range backwards, are the API's refusals, shown as such.
func TestBackfillForm(t *testing.T) {
	h := newHarness(t, false)
	h.seed()
	b := h.browser()
	b.signIn(adminToken)
	page := b.get(jobA)
	form := regexp.MustCompile(`(?s)<form method="post" action="([^"]+)" data-enhance class="backfill" id="backfill-form">\s*<input type="hidden" name="csrf" value="([^"]+)">.*?</form>`).FindStringSubmatch(page.body)
	if form == nil || form[1] != jobA+"/backfill" {
		t.Fatalf("no backfill form posting to %s/backfill:\n%s\n%s", jobA, page.body, h.logs.String())
	}
	for _, want := range []string{`<input type="datetime-local" name="from" id="backfill-from" step="1" required>`,
		`<input type="datetime-local" name="to" id="backfill-to" step="1" required>`, `times in Europe/Berlin`, `<button type="submit" id="backfill">Backfill</button>`} {
		if !strings.Contains(form[0], want) {
			t.Errorf("the form lacks %s:\n%s", want, form[0])
		}
	}
	tok := form[2]
	json := map[string]string{"Accept": "application/json"}
	// Every three hours from 08:15 Berlin: [2026-11-17 08:15, 2026-11-18 08:15) holds eight.
	rng := url.Values{"from": {"2026-11-17T08:15"}, "to": {"2026-11-18T08:15"}}
	if p := b.do(http.MethodPost, jobA+"/backfill", rng, json); p.status != http.StatusForbidden {
		t.Errorf("without the CSRF token: %d %s", p.status, p.body)
	}
	if xs, err := h.store.ExecutionListUnfinished(t.Context(), store.ExecutionListUnfinishedParams{}); err != nil || len(xs) != 0 {
		t.Fatalf("stored after a refused form: %d %v", len(xs), err)
	}
	rng.Set("csrf", tok)
	p := b.do(http.MethodPost, jobA+"/backfill", rng, json)
	want := `{"ok":true,"message":"Started a backfill of hourly: 8 occurrences from 2026-11-17T07:15:00Z to 2026-11-18T04:15:00Z, run one after the other, oldest first; the history shows each as it ends.","state":"Enabled"`
	if p.status != http.StatusOK || !strings.HasPrefix(p.body, want) {
		t.Fatalf("backfill: %d %s\nwant %s...", p.status, p.body, want)
	}
	xs, err := h.store.ExecutionListUnfinished(t.Context(), store.ExecutionListUnfinishedParams{})
	if err != nil {
		t.Fatal(err)
	}
	var backfill int
	for _, x := range xs {
		if x.Backfill {
			backfill++
		}
	}
	if backfill != 8 {
		t.Errorf("%d backfill executions stored, want 8", backfill)
	}
	p = b.do(http.MethodPost, jobA+"/backfill", rng, json)
	if p.status != http.StatusConflict || !strings.Contains(p.body, `"message":"The API refused: job hourly has a backfill that is unfinished (execution tag `) {
		t.Errorf("second backfill: %d %s", p.status, p.body)
	}
	p = b.do(http.MethodPost, jobA+"/backfill", url.Values{"csrf": {tok}, "from": {"2026-11-18T08:15"}, "to": {"2026-11-17T08:15"}}, json)
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "to: 2026-11-17T07:15:00Z is not after from 2026-11-18T07:15:00Z") {
		t.Errorf("a range backwards: %d %s", p.status, p.body)
	}
}
