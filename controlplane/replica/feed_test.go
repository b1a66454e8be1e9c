package replica

import (
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// TestFeedDeliversEachChangeOnce: a change is news once, whether its notification or the change
// feed's read comes first; a notification outside the feed (Seq 0) is always news.
func TestFeedDeliversEachChangeOnce(t *testing.T) {
	f := newFeed(&Replica{}, nil)
	job := func(seq int64) store.Change { return store.Change{Kind: store.ChangeJob, ID: 7, Seq: seq} }
	steps := []struct {
		what string
		got  bool
		want bool
	}{
		{"5 notified", f.notified(job(5)), true},
		{"5 read", f.fromFeed(job(5)), false},
		{"6 read", f.fromFeed(job(6)), true},
		{"6 notified", f.notified(job(6)), false},
		{"takeable notified", f.notified(store.Change{Kind: store.ChangeTakeable}), true},
		{"takeable notified again", f.notified(store.Change{Kind: store.ChangeTakeable}), true},
	}
	for _, s := range steps {
		if s.got != s.want {
			t.Errorf("%s: news = %v, want %v", s.what, s.got, s.want)
		}
	}
	if n := len(f.seen); n != 0 {
		t.Errorf("%d sequence numbers still remembered, want none (each change was heard both ways)", n)
	}
	for seq := range int64(maxSeen + 10) {
		f.notified(job(seq + 100))
	}
	if n := len(f.seen); n > maxSeen {
		t.Errorf("%d sequence numbers remembered, want at most %d", n, maxSeen)
	}
}
