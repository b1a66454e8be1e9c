package dispatch_test

import (
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// TestSecretSealedForAnotherJobDoesNotOpen: a victim's sealed password written straight into
// another job's row (someone with write access to the database file) does not open for that job:
// its attempt fails with a message saying why, and nothing (no request, no plaintext) reaches its
// target.
func TestSecretSealedForAnotherJobDoesNotOpen(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, nil)
	victim := everyMinute(t0.Add(time.Hour))
	victim.Action = httpAction("http://127.0.0.1:1/victim")
	victim.Action.Request.Authentication = &wire.HTTPAuthentication{Type: "Basic", Username: "alice", Password: "hunter2"}
	v := e.putJob("victim", victim, "Disabled")
	stolen := e.job(v.ID).Properties.Action.Request.Authentication.Password

	thief := everyMinute(t0.Add(time.Minute))
	thief.Action = httpAction(tg.URL + "/thief")
	thief.Action.RetryPolicy = &wire.RetryPolicy{RetryType: "None"}
	thief.Action.Request.Authentication = &wire.HTTPAuthentication{Type: "Basic", Username: "alice", Password: "own"}
	j := e.putJob("thief", thief, "Enabled")
	row := e.job(j.ID)
	row.Properties.Action.Request.Authentication.Password = stolen
	if _, _, err := e.store.JobPut(t.Context(), store.JobPutParams{Job: *row, ExpectVersion: row.Version, Now: t0}); err != nil {
		t.Fatal(err)
	}

	e.start()
	e.clock.Set(t0.Add(time.Minute))
	r := e.record()
	msg := r.History.Message
	if r.JobID != j.ID || r.History.Status != "Failed" ||
		msg != "the job's secrets cannot be opened: action.request.authentication.password: open: the sealed value does not open for this job: it was sealed for another job or with another key" {
		t.Fatalf("record: job %d status %s message %q", r.JobID, r.History.Status, msg)
	}
	if strings.Contains(msg, "hunter2") {
		t.Fatal("the message holds the plaintext")
	}
	// The attempt is recorded: had it sent a request, the target would have it already.
	select {
	case h := <-tg.hits:
		t.Fatalf("a request reached the target: %s %s Authorization %q", h.Method, h.Path, h.Header.Get("Authorization"))
	default:
	}
}
