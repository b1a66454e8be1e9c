package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// TestCostPutAndFire measures what a PUT (and a fire) costs in JSON decodes and encodes and
// recurrence compiles: it PUTs COST_N jobs (one-shot; with COST_REC=1 hourly) through the API
// alone, or with COST_FIRE=1 through the API and the dispatcher, fires them and waits until they
// are recorded. Run it twice under coverage counting, with COST_N=1 and COST_N=11:
//
//	COST_N=11 COST_FIRE=1 go test ./controlplane/api -run TestCostPutAndFire -covermode=count \
//		-coverpkg=encoding/json,./... -coverprofile=cost-11.out
//
// the difference of the counts of a function's first block (json.Marshal, json.Unmarshal,
// (*json.Decoder).Decode, recurrence.Compile, ...) divided by 10 is its calls per job. It is
// skipped unless COST_N is set. The latest counts, with those of the main before, are in
// controlplane/cmd/schedbench/RESULTS.md ("Decodes, encodes and compiles per job"); the reads
// of the store per PUT and per run are pinned by TestPutAndRunNowReadTheJobOnce and
// TestJobCreateInAKnownCollectionReadsNothing.
func TestCostPutAndFire(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("COST_N"))
	if n == 0 {
		t.Skip("COST_N not set")
	}
	fire := os.Getenv("COST_FIRE") == "1"
	var lh *liveHarness
	if fire {
		lh = newLiveHarness(t)
	} else {
		// The API alone: no dispatcher reloading the jobs at its own pace.
		lh = &liveHarness{harness: newHarness(t)}
		lh.receiver = httptest.NewServer(http.NotFoundHandler())
		t.Cleanup(lh.receiver.Close)
		lh.collection(collPath, `{"sku":{"name":"Standard"}}`)
	}
	at := t0.Add(time.Hour)
	for i := range n {
		if os.Getenv("COST_REC") == "1" {
			lh.must(http.StatusCreated, http.MethodPut, collPath+"/jobs/"+fmt.Sprintf("c%d", i)+apiVersion, `{"properties":{"startTime":"`+
				at.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano)+`","action":{"type":"Http","request":{"uri":"`+lh.receiver.URL+
				`/c","method":"POST"}},"recurrence":{"frequency":"Hour","interval":1}}}`)
			continue
		}
		lh.putOnceIn(http.StatusCreated, collPath, fmt.Sprintf("c%d", i), at.Add(time.Duration(i)*time.Second), "/c")
	}
	if !fire {
		return
	}
	lh.fake.Set(at.Add(time.Duration(n) * time.Second))
	for range n {
		select {
		case <-lh.hits:
		case <-time.After(10 * time.Second):
			t.Fatal("not fired")
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		xs, err := lh.store.ExecutionListUnfinished(t.Context(), store.ExecutionListUnfinishedParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(xs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not recorded")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
