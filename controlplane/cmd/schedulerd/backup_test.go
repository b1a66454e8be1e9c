package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
)

// TestBackupUnderLoad: `schedulerd backup` copies the store of a daemon that keeps writing (jobs
// created, each fired at once, and run again on request, by several clients at a time) into a
// file that passes PRAGMA integrity_check and holds every job created before the backup began;
// a daemon started on the copy, with the same key, fires a probe job's next occurrence with its
// sealed password opened.
func TestBackupUnderLoad(t *testing.T) {
	recv, recvURL := newDeliveries(t)
	src := filepath.Join(t.TempDir(), "a")
	a, stopA := startOn(t, src)
	a.call(http.MethodPut, probeCollection, `{"location":"local","properties":{"sku":{"name":"Standard"}}}`, http.StatusCreated)
	start := time.Now().UTC().Add(-50 * time.Second).Format(time.RFC3339)
	a.call(http.MethodPut, probeCollection+"/jobs/probe", fmt.Sprintf(`{"properties":{"startTime":%q,
		"recurrence":{"frequency":"Minute","interval":1},
		"action":{"type":"Http","request":{"method":"POST","uri":"%s/probe",
		"authentication":{"type":"Basic","username":"u","password":"backup-secret"}}}}}`, start, recvURL), http.StatusCreated)

	// The load: four clients each put ten jobs again and again (created, then replaced), each
	// put starting its job at once (claims, attempts, history), until the backups are done.
	var created atomic.Int64
	stopLoad := make(chan struct{})
	var load sync.WaitGroup
	for c := range 4 {
		load.Add(1)
		go func() {
			defer load.Done()
			for i := 0; ; i++ {
				select {
				case <-stopLoad:
					return
				default:
				}
				name := fmt.Sprintf("load-%d-%d", c, i%10)
				want := http.StatusOK
				if i < 10 {
					want = http.StatusCreated
				}
				a.call(http.MethodPut, probeCollection+"/jobs/"+name, fmt.Sprintf(`{"properties":{"startTime":%q,
					"recurrence":{"frequency":"Minute","interval":1},
					"action":{"type":"Http","request":{"method":"GET","uri":"%s/load"}}}}`, time.Now().UTC().Format(time.RFC3339), recvURL), want)
				created.Add(1)
			}
		}()
	}
	for deadline := time.Now().Add(60 * time.Second); created.Load() < 200; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the load made %d puts in 60s", created.Load())
		}
	}

	var last string
	var before int64
	rows := regexp.MustCompile(`(?m)^  jobs +(\d+) rows`)
	for i := range 3 {
		before = 41 // the load's 40 jobs, created in its first 200 puts, and the probe
		last = filepath.Join(t.TempDir(), fmt.Sprintf("backup-%d.db", i))
		var out, errOut bytes.Buffer
		if code := run(t.Context(), []string{"backup", "--data", src, "--to", last}, nil, &out, &errOut); code != 0 {
			t.Fatalf("backup %d: exit %d\n%s%s", i, code, out.String(), errOut.String())
		}
		if !strings.Contains(out.String(), "(integrity_check ok)") {
			t.Fatalf("backup %d: %s", i, out.String())
		}
		m := rows.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("backup %d does not count its jobs:\n%s", i, out.String())
		}
		if n, _ := strconv.ParseInt(m[1], 10, 64); n != before {
			t.Fatalf("backup %d holds %d jobs, want the %d created before it began", i, n, before)
		}
		if err := sqlite.IntegrityCheck(t.Context(), last); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(last); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("backup file: %v, %v (want mode 0600)", fi, err)
		}
	}
	close(stopLoad)
	load.Wait()
	// A file that exists is never overwritten.
	var errOut bytes.Buffer
	if code := run(t.Context(), []string{"backup", "--data", src, "--to", last}, nil, &bytes.Buffer{}, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "file exists") {
		t.Fatalf("backup onto an existing file: exit %d, %s", code, errOut.String())
	}
	if err := sqlite.IntegrityCheck(t.Context(), last); err != nil {
		t.Fatal(err)
	}

	// Restore: the copy as scheduler.db of a new data directory, with the key.
	d, err := sqlite.Open(t.Context(), last)
	if err != nil {
		t.Fatal(err)
	}
	probe, err := d.JobGet(t.Context(), store.JobGetParams{Key: store.JobKey{
		CollectionKey: store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c"}, Name: "probe"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	stopA()
	restored := filepath.Join(t.TempDir(), "restored")
	copyFile(t, last, filepath.Join(restored, "scheduler.db"))
	copyFile(t, filepath.Join(src, "secret.key"), filepath.Join(restored, "secret.key"))
	r, _ := startOn(t, restored, "--region", "restored", "--misfire-threshold", "10m")
	got := recv.waitRegion(t, "restored", 1, 3*time.Minute)
	// The load jobs the copy holds unfinished run again too (at least once); the probe fires its
	// next occurrence.
	for len(got["probe"]) == 0 {
		got = recv.waitRegion(t, "restored", len(got["probe"])+len(got["load"])+1, 3*time.Minute)
	}
	p := got["probe"][0]
	exp, err := time.Parse(time.RFC3339, p.expected)
	if p.auth != "Basic dTpiYWNrdXAtc2VjcmV0" || err != nil || !exp.Equal(probe.Status.NextExecutionTime.Truncate(time.Second)) {
		t.Fatalf("the restored daemon's probe request %+v, want the password opened and the occurrence %s", p,
			probe.Status.NextExecutionTime.Format(time.RFC3339))
	}
	// And it answers for the jobs of the copy.
	r.call(http.MethodGet, probeCollection+"/jobs/load-0-0", "", http.StatusOK)
}
