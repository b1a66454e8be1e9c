package api

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// previewRecurrence is a jittered daily rule in Berlin with three excluded dates, two of them
// right after its first run.
const previewRecurrence = `"recurrence":{"frequency":"Day","timeZone":"Europe/Berlin","jitter":"PT5M",` +
	`"excludeDates":["2026-11-20","2026-11-21","2026-12-25"]}`

// previewWords is the rule in words, as every preview and the provider's recurrence_description say it.
const previewWords = "at 00:00 every day, up to 5 minutes later, except 3 dates, from 2026-11-19 00:00, Europe/Berlin"

// TestPreviewOfAStoredJobHonoursJitterAndExcludedDates: POST /preview/occurrences of a job
// exactly as GET returns it (its id, its secret left out) lists each occurrence at the job's
// jittered start, without the excluded dates, with the scheduled times beside; the same
// properties without the id list the scheduled times and the jitter window. The real dispatcher
// on the fake clock then starts each occurrence at exactly the previewed instant, reporting the
// scheduled time as the expected one.
func TestPreviewOfAStoredJobHonoursJitterAndExcludedDates(t *testing.T) {
	type hitAt struct {
		at       time.Time
		expected string
	}
	var fake *clock.Fake
	hit := make(chan hitAt, 8)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit <- hitAt{fake.Now(), r.Header.Get("x-ms-scheduler-expected-execution-time")}
		w.WriteHeader(http.StatusOK)
	}))
	defer receiver.Close()
	recorded := make(chan struct{}, 8)
	var disp *dispatch.Dispatcher
	h := newHarness(t, func(c *Config) {
		fake, _ = c.Clock.(*clock.Fake)
		d, err := dispatch.New(dispatch.Config{Store: c.Store, Clock: c.Clock, Secrets: c.Secrets, Workers: 2,
			OnRecord: func(store.AttemptRecord, store.AttemptRecordResult) { recorded <- struct{}{} }})
		if err != nil {
			t.Fatal(err)
		}
		d.TestSignals.Init()
		disp = d
		c.Dispatcher = d
	})
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	h.must(201, http.MethodPut, jobPath, `{"properties":{"startTime":"2026-11-19T00:00:00","action":{"type":"Http","request":{"uri":"`+
		receiver.URL+`","method":"POST","authentication":{"type":"Basic","username":"u","password":"p4ss"}}},`+previewRecurrence+`}}`)
	asReturned := h.must(200, http.MethodGet, jobPath, nil).body

	// The stored job: its starts, then the scheduled times.
	r := h.do(http.MethodPost, "/preview/occurrences?count=4", subAToken, asReturned)
	want := `{"value":["2026-11-19T00:02:52.15+01:00","2026-11-22T00:03:18.794+01:00","2026-11-23T00:01:49.063+01:00","2026-11-24T00:04:27.849+01:00"],` +
		`"describe":"` + previewWords + `","jitter":"PT5M",` +
		`"scheduled":["2026-11-19T00:00:00+01:00","2026-11-22T00:00:00+01:00","2026-11-23T00:00:00+01:00","2026-11-24T00:00:00+01:00"]}`
	if r.status != 200 || string(r.body) != want {
		t.Fatalf("preview of the job as returned: %d\n%s\nwant\n%s", r.status, r.body, want)
	}
	// The same job's id in another case is the same job.
	r = h.do(http.MethodPost, "/preview/occurrences?count=4", subAToken,
		`{"id":"/SUBSCRIPTIONS/SUB-A/resourcegroups/RG1/providers/Microsoft.Scheduler/jobCollections/JC1/jobs/J1","properties":{"startTime":"2026-11-19T00:00:00",`+previewRecurrence+`}}`)
	if r.status != 200 || string(r.body) != want {
		t.Fatalf("preview with the id in another case: %d %s", r.status, r.body)
	}
	// No id: the scheduled times, each the start of a window of "jitter".
	r = h.do(http.MethodPost, "/preview/occurrences?count=4", subAToken, `{"startTime":"2026-11-19T00:00:00",`+previewRecurrence+`}`)
	if want := `{"value":["2026-11-19T00:00:00+01:00","2026-11-22T00:00:00+01:00","2026-11-23T00:00:00+01:00","2026-11-24T00:00:00+01:00"],` +
		`"describe":"` + previewWords + `","jitter":"PT5M"}`; r.status != 200 || string(r.body) != want {
		t.Fatalf("preview without id: %d\n%s\nwant\n%s", r.status, r.body, want)
	}
	// Another job's id: another start.
	r = h.do(http.MethodPost, "/preview/occurrences?count=1", subAToken,
		`{"id":"/subscriptions/sub-a/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1/jobs/j2","properties":{"startTime":"2026-11-19T00:00:00",`+previewRecurrence+`}}`)
	if want := `{"value":["2026-11-19T00:01:24.709+01:00"],"describe":"` + previewWords + `","jitter":"PT5M","scheduled":["2026-11-19T00:00:00+01:00"]}`; r.status != 200 || string(r.body) != want {
		t.Fatalf("preview of another job: %d\n%s\nwant\n%s", r.status, r.body, want)
	}
	// An id without jitter changes nothing: Azure's answer.
	r = h.do(http.MethodPost, "/preview/occurrences?count=2", subAToken,
		`{"id":"/subscriptions/sub-a/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1/jobs/j1","properties":{"startTime":"2026-11-19T00:00:00Z","recurrence":{"frequency":"Day"}}}`)
	if want := `{"value":["2026-11-19T00:00:00Z","2026-11-20T00:00:00Z"],"describe":"at 00:00 every day, from 2026-11-19 00:00"}`; r.status != 200 || string(r.body) != want {
		t.Fatalf("preview without jitter: %d %s", r.status, r.body)
	}
	// An id that is not a job's: a 400 naming id.
	r = h.do(http.MethodPost, "/preview/occurrences", subAToken, `{"id":"/subscriptions/sub-a/jobs/j1","properties":{`+previewRecurrence+`}}`)
	if code, msg := r.errorBody(t); r.status != 400 || code != "BadRequest" ||
		msg != `id: "/subscriptions/sub-a/jobs/j1" is not a job's id /subscriptions/{subscription}/resourceGroups/{resourceGroup}/providers/Microsoft.Scheduler/jobCollections/{collection}/jobs/{job}` {
		t.Fatalf("bad id: %d %s %q", r.status, code, msg)
	}

	// The dispatcher starts each occurrence at the previewed start: it plans its claim Lookahead
	// before it (Quiet.Next), and the target is called when the clock reaches it.
	defer runDispatcher(t, disp)()
	starts := []string{"2026-11-19T00:02:52.15+01:00", "2026-11-22T00:03:18.794+01:00", "2026-11-23T00:01:49.063+01:00"}
	scheduled := []string{"2026-11-18T23:00:00Z", "2026-11-21T23:00:00Z", "2026-11-22T23:00:00Z"}
	for i, s := range starts {
		start, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := disp.TestSignals.Quiet.Wait(10*time.Second, func(q dispatch.Quiet) bool {
			return q.Next.Equal(start.Add(-dispatch.DefaultLookahead))
		}); err != nil {
			t.Fatalf("occurrence %d: the dispatcher does not plan to start it at %s: %v", i, s, err)
		}
		fake.Set(start)
		select {
		case got := <-hit:
			if !got.at.Equal(start) || got.expected != scheduled[i] {
				t.Fatalf("occurrence %d started at %s expecting %s, want %s expecting %s", i, got.at.Format(time.RFC3339Nano), got.expected, s, scheduled[i])
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("occurrence %d: no call at %s", i, s)
		}
		select {
		case <-recorded:
		case <-time.After(10 * time.Second):
			t.Fatalf("occurrence %d was not recorded", i)
		}
	}
}
