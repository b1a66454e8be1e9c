package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDashboardHealthNamesTheReplica: two replicas on one PostgreSQL database; the dashboard's
// Health page of each says its replica id and whether it leads, in agreement with the
// scheduler_leader gauge.
func TestDashboardHealthNamesTheReplica(t *testing.T) {
	set := newReplicaSet(t)
	set.start("dash-one")
	set.start("dash-two")
	leader := set.waitLeader(30 * time.Second)
	cell := regexp.MustCompile(`<td id="health-leader">(.*?)</td>`)
	for _, p := range set.list() {
		jar, err := cookiejar.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
		base := "http://" + p.addr
		resp, err := c.PostForm(base+"/ui/signin", url.Values{"token": {replicaToken}})
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		resp, err = c.Get(base + "/ui/health")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		want := "this replica (<code>" + p.id + "</code>) follows: another replica leads"
		if p == leader {
			want = "this replica (<code>" + p.id + "</code>) leads: it computes the schedule and claims occurrences"
		}
		u, err := url.Parse(set.dbURL)
		if err != nil {
			t.Fatal(err)
		}
		store := `<span id="health-driver">PostgreSQL database ` + strings.TrimPrefix(u.Path, "/") + ` on ` + u.Host + `, schema ` + u.Query().Get("search_path") + `</span>`
		if !strings.Contains(string(body), store) {
			t.Errorf("replica %s: the health page does not name the store in words (%s):\n%s", p.id, store, body)
		}
		m := cell.FindSubmatch(body)
		if resp.StatusCode != http.StatusOK || m == nil || string(m[1]) != want {
			t.Errorf("replica %s: %d %q, want %q", p.id, resp.StatusCode, m, want)
		}
	}
}
