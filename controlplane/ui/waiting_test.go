package ui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// TestBufferedOccurrenceWaitingOnTheJobPage: a BufferOne job whose 12:01 execution hangs (a
// real dispatcher on the fake clock) keeps its 12:02 occurrence waiting; the job page says so,
// naming the execution it waits for, and says nothing of it before nor once it ran.
func TestBufferedOccurrenceWaitingOnTheJobPage(t *testing.T) {
	h := newHarness(t, false)
	arrived := make(chan string, 4)
	answer := make(chan struct{})
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- r.Header.Get("x-ms-execution-tag")
		<-answer
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(target.Close)
	released := false
	release := func() {
		if !released {
			released = true
			close(answer)
		}
	}
	t.Cleanup(release) // before the target closes
	h.mustAPI(http.MethodPut, collA, `{"location":"westus","properties":{"sku":{"name":"Standard"}}}`)
	h.mustAPI(http.MethodPut, collA+"/jobs/buffered", `{"properties":{"startTime":"2026-11-18T12:01:00Z",
		"recurrence":{"frequency":"Minute","interval":1},"overlap":"BufferOne",
		"action":{"type":"Http","request":{"method":"GET","uri":"`+target.URL+`"},"timeout":"PT10M"}}}`)
	key := jobKeyA()
	key.Name = "buffered"
	j, err := h.store.JobGet(t.Context(), store.JobGetParams{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	b := h.browser()
	b.signIn(adminToken)
	page := uiCollA + "/jobs/buffered"
	const marker = `id="waiting"`
	if body := b.get(page).body; strings.Contains(body, marker) {
		t.Fatalf("nothing waits yet, the page says:\n%s", section(body, "facts"))
	}

	first, second := t0.Add(30*time.Second), t0.Add(90*time.Second) // 12:01:00 and 12:02:00
	if _, err := h.disp.TestSignals.Quiet.Wait(20*time.Second, func(q dispatch.Quiet) bool { return q.Next.Equal(first) }); err != nil {
		t.Fatal(err)
	}
	h.clock.Set(first)
	var running string
	select {
	case running = <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the first occurrence did not reach the target")
	}
	h.clock.Set(second)
	if _, err := h.disp.TestSignals.Buffered.Wait(20*time.Second, func(x dispatch.Buffered) bool {
		return x.JobID == j.ID && x.Scheduled.Equal(second)
	}); err != nil {
		t.Fatal(err)
	}
	wantIn(t, "the job page while 12:02 waits", b.get(page).body,
		`<div><dt>Waiting</dt><dd id="waiting">1 waiting: due <time datetime="2026-11-18T12:02:00Z">12:02</time>, runs when <code>`+running+`</code> ends</dd></div>`)

	release()
	select {
	case <-arrived: // the waiting one, released when the first ended
	case <-time.After(20 * time.Second):
		t.Fatal("the waiting occurrence did not run")
	}
	if body := b.get(page).body; strings.Contains(body, marker) {
		t.Errorf("the waiting occurrence runs, the page still says:\n%s", section(body, "facts"))
	}
}
