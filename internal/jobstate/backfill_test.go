package jobstate_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

func TestBackfill(t *testing.T) {
	rule, err := recurrence.Compile("2026-06-01T09:00:00Z", &wire.JobRecurrence{Frequency: "Hour", Count: intp(2),
		ExcludeDates: []string{"2026-06-02"}}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	now := ts(t, "2026-06-10T00:00:00Z")
	got, ps := jobstate.Backfill(rule, ts(t, "2026-06-01T22:00:00Z"), ts(t, "2026-06-03T01:00:00Z"), now)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	// [from, to): 22:00 and 23:00 on the 1st, the 2nd excluded, 00:00 on the 3rd; count does not apply.
	if s := format(got); s != "2026-06-01T22:00:00Z 2026-06-01T23:00:00Z 2026-06-03T00:00:00Z" {
		t.Errorf("occurrences %s", s)
	}
	for _, tc := range []struct {
		name, from, to string
		want           wire.Problems
	}{
		{"backwards", "2026-06-05T00:00:00Z", "2026-06-04T00:00:00Z",
			wire.Problems{{Path: "to", Message: "2026-06-04T00:00:00Z is not after from 2026-06-05T00:00:00Z: the range is [from, to)"}}},
		{"in the future", "2026-06-09T00:00:00Z", "2026-06-10T00:00:01Z",
			wire.Problems{{Path: "to", Message: "2026-06-10T00:00:01Z is in the future (now is 2026-06-10T00:00:00Z): a backfill runs occurrences that are past"}}},
		{"before the anchor", "2026-05-01T00:00:00Z", "2026-06-01T09:00:00Z",
			wire.Problems{{Path: "from", Message: "[2026-05-01T00:00:00Z, 2026-06-01T09:00:00Z) holds no occurrence of the job's schedule"}}},
	} {
		if _, ps := jobstate.Backfill(rule, ts(t, tc.from), ts(t, tc.to), now); !reflect.DeepEqual(ps, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, ps, tc.want)
		}
	}
	everyMinute, err := recurrence.Compile("2026-06-01T00:00:00Z", &wire.JobRecurrence{Frequency: "Minute"}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	from := ts(t, "2026-06-01T00:00:00Z")
	if got, ps := jobstate.Backfill(everyMinute, from, from.Add(1000*time.Minute), now); len(ps) > 0 || len(got) != 1000 {
		t.Errorf("1,000 occurrences: %d, %v", len(got), ps)
	}
	_, ps = jobstate.Backfill(everyMinute, from, from.Add(1001*time.Minute), now)
	if len(ps) != 1 || ps[0].Path != "to" || !strings.Contains(ps[0].Message, "holds more than 1000 occurrences") {
		t.Errorf("1,001 occurrences: %v", ps)
	}
}

func TestBackfillOnChange(t *testing.T) {
	on, off := jobstate.CollectionEnabled, "Disabled"
	for _, c := range []struct {
		state, collection, newState, newCollection string
		want                                       bool
	}{
		{jobstate.Enabled, on, jobstate.Disabled, on, true},
		{jobstate.Enabled, on, jobstate.Enabled, off, true},
		{jobstate.Enabled, on, jobstate.Enabled, "Suspended", true},
		{jobstate.Enabled, on, jobstate.Enabled, on, false},
		{jobstate.Disabled, on, jobstate.Disabled, on, false}, // a Disabled job's backfill runs on
		{jobstate.Disabled, on, jobstate.Enabled, on, false},
		{jobstate.Enabled, off, jobstate.Disabled, off, false},
		{jobstate.Disabled, on, jobstate.Disabled, off, true}, // a Disabled job runs on request only in an Enabled collection
		{jobstate.Disabled, on, jobstate.Disabled, "Suspended", true},
		{jobstate.Disabled, off, jobstate.Disabled, "Suspended", false},
		{jobstate.Enabled, off, jobstate.Enabled, on, false},
	} {
		if got := jobstate.BackfillOnChange(c.state, c.collection, c.newState, c.newCollection); got != c.want {
			t.Errorf("BackfillOnChange(%s, %s, %s, %s) = %v, want %v", c.state, c.collection, c.newState, c.newCollection, got, c.want)
		}
	}
}

func TestBackfillOnCollectionChange(t *testing.T) {
	for _, c := range []struct {
		from, to string
		want     []string
	}{
		{jobstate.CollectionEnabled, "Disabled", []string{jobstate.Enabled, jobstate.Disabled}},
		{jobstate.CollectionEnabled, "Suspended", []string{jobstate.Enabled, jobstate.Disabled}},
		{"Disabled", jobstate.CollectionEnabled, nil},
		{"Disabled", "Suspended", nil},
		{jobstate.CollectionEnabled, jobstate.CollectionEnabled, nil},
	} {
		if got := jobstate.BackfillOnCollectionChange(c.from, c.to); !slices.Equal(got, c.want) {
			t.Errorf("BackfillOnCollectionChange(%s, %s) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}
