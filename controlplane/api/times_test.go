package api

import (
	"encoding/json"
	"net/http"
	"testing"
)

// startTime and endTime are answered in RFC 3339 in the rule's zone (what the Azure SDK parses),
// or as the client wrote them when it prefers times=as-written (the provider, so that an
// imported job plans clean); both denote the same instants, and list answers follow the same
// preference.
func TestJobTimesAsWritten(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	path := collPath + "/jobs/times" + apiVersion
	for _, tc := range []struct {
		name               string
		start, end, zone   string
		wantStart, wantEnd string
	}{
		{"offset", "2030-12-01T07:30:00-05:00", "2031-01-01T00:00:00-05:00", "", "2030-12-01T07:30:00-05:00", "2031-01-01T00:00:00-05:00"},
		{"Z", "2030-12-01T12:30:00Z", "2031-01-01T05:00:00Z", "", "2030-12-01T12:30:00Z", "2031-01-01T05:00:00Z"},
		{"no offset", "2030-12-01T07:30:00", "2031-01-01T00:00", "", "2030-12-01T07:30:00Z", "2031-01-01T00:00:00Z"},
		{"date only", "2030-12-01", "2031-01-01", "", "2030-12-01T00:00:00Z", "2031-01-01T00:00:00Z"},
		{"fraction, lower case", "2030-12-01t07:30:00.5z", "2031-01-01T00:00:00+00:00", "", "2030-12-01T07:30:00.5Z", "2031-01-01T00:00:00Z"},
		{"time zone", "2030-12-01T07:30:00", "2031-01-01", "America/New_York", "2030-12-01T07:30:00-05:00", "2031-01-01T00:00:00-05:00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			zone := ""
			if tc.zone != "" {
				zone = `,"timeZone":"` + tc.zone + `"`
			}
			body := `{"properties":{"startTime":"` + tc.start + `",` + httpsAction + `,"recurrence":{"frequency":"Day","endTime":"` + tc.end + `"` + zone + `}}}`
			h.must(http.StatusCreated, http.MethodPut, path, body)
			times := func(r response) (string, string) {
				t.Helper()
				var def struct {
					Properties struct {
						StartTime  string `json:"startTime"`
						Recurrence struct {
							EndTime string `json:"endTime"`
						} `json:"recurrence"`
					} `json:"properties"`
				}
				if r.status != http.StatusOK || json.Unmarshal(r.body, &def) != nil {
					t.Fatalf("GET: %d %s", r.status, r.body)
				}
				return def.Properties.StartTime, def.Properties.Recurrence.EndTime
			}
			if s, e := times(h.raw(http.MethodGet, path, "")); s != tc.wantStart || e != tc.wantEnd {
				t.Errorf("RFC 3339: %s %s, want %s %s", s, e, tc.wantStart, tc.wantEnd)
			}
			r := h.raw(http.MethodGet, path, "", "Prefer", "respond-async, times=as-written")
			if s, e := times(r); s != tc.start || e != tc.end {
				t.Errorf("as written: %s %s, want %s %s", s, e, tc.start, tc.end)
			}
			if got := r.header.Get("Preference-Applied"); got != "times=as-written" {
				t.Errorf("Preference-Applied %q", got)
			}
			list := h.raw(http.MethodGet, collPath+"/jobs"+apiVersion, "", "Prefer", "times=as-written")
			var page struct {
				Value []struct {
					Properties struct {
						StartTime string `json:"startTime"`
					} `json:"properties"`
				} `json:"value"`
			}
			if err := json.Unmarshal(list.body, &page); err != nil || len(page.Value) != 1 || page.Value[0].Properties.StartTime != tc.start {
				t.Errorf("list as written: %d %s", list.status, list.body)
			}
			h.must(http.StatusOK, http.MethodDelete, path, "")
		})
	}
}
