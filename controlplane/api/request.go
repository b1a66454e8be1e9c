package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// readBody reads a request body (bounded by limited): 415 when its Content-Type is not JSON in
// UTF-8 (see checkContentType), 400 when it is too large or empty.
func readBody(r *http.Request) ([]byte, *apiError) {
	if e := checkContentType(r.Header.Values("Content-Type")); e != nil {
		return nil, e
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, badRequest("the request body is larger than %d bytes", mbe.Limit)
		}
		return nil, badRequest("reading the request body: %v", err)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil, badRequest("the request body is required")
	}
	return b, nil
}

// checkContentType accepts a body whose Content-Type is application/json or text/json, with no
// charset or charset=utf-8, as ARM does; anything else, a missing Content-Type and a repeated one
// included, is a 415 UnsupportedMediaType naming what was sent. (Azure's SDKs always send
// application/json; a client that sends none would leave the server to guess.)
func checkContentType(values []string) *apiError {
	unsupported := func(format string, args ...any) *apiError {
		return &apiError{http.StatusUnsupportedMediaType, codeUnsupportedMediaType,
			fmt.Sprintf(format, args...) + "; send Content-Type: application/json (or text/json), in UTF-8"}
	}
	switch len(values) {
	case 0:
		return unsupported("the request has a body but no Content-Type")
	case 1:
	default:
		return unsupported("the request has %d Content-Type headers", len(values))
	}
	mt, params, err := mime.ParseMediaType(values[0])
	if err != nil {
		return unsupported("the Content-Type %q cannot be parsed", values[0])
	}
	if mt != "application/json" && mt != "text/json" {
		return unsupported("the Content-Type %q is not supported", mt)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return unsupported("the charset %q is not supported", cs)
	}
	return nil
}

// rawProperties returns the "properties" member of a JSON object (matched case-insensitively),
// nil when absent or null. The document is already known to be valid JSON.
func rawProperties(body []byte) (map[string]any, error) {
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	for k, v := range doc {
		if strings.EqualFold(k, "properties") {
			m, _ := v.(map[string]any)
			return m, nil
		}
	}
	return nil, nil
}

// page is a list request's $top, $skip and $filter value.
type page struct {
	top, skip int
	filter    string // the filter's value in Azure spelling; "" for none
}

// maxTop is the largest $top (and the page size when there is none).
const maxTop = 100

var filterRE = regexp.MustCompile(`(?i)^\s*([a-z]+)\s+eq\s+'?\s*([a-z]+)\s*'?\s*$`)

// parsePage reads $top (1..100), $skip (or $skiptoken, which nextLink does not use but other
// clients may send) and $filter ("<field> eq <value>", case-insensitive, quotes optional) with
// the field named and the values canon accepts. field "" allows no filter.
func parsePage(r *http.Request, field string, canon func(string) (string, bool)) (page, *apiError) {
	q := r.URL.Query()
	p := page{top: maxTop}
	if v := q.Get("$top"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxTop {
			return p, badRequest("$top %q must be an integer from 1 to %d", v, maxTop)
		}
		p.top = n
	}
	for _, name := range []string{"$skip", "$skiptoken"} {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return p, badRequest("%s %q must be a non-negative integer", name, v)
			}
			p.skip = n
		}
	}
	if v := q.Get("$filter"); v != "" {
		if field == "" {
			return p, badRequest("$filter is not supported here")
		}
		m := filterRE.FindStringSubmatch(v)
		if m == nil || !strings.EqualFold(m[1], field) {
			return p, badRequest("$filter %q must be \"%s eq <value>\"", v, field)
		}
		c, ok := canon(m[2])
		if !ok {
			return p, badRequest("$filter %q: %q is not a %s", v, m[2], field)
		}
		p.filter = c
	}
	return p, nil
}

// nextLink is the absolute URL of the page after one of n items (fetched with top+1 to know
// whether there is more); "" when there is no more. Its scheme and host come from the configured
// public URL, else from the local address the connection arrived on, never from the request's
// Host header (which the client chooses: a forged Host would send the next page's request, token
// and all, wherever it names).
func (s *Server) nextLink(r *http.Request, p page, n int) string {
	if n <= p.top {
		return ""
	}
	base := s.publicURL
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		addr, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if addr == nil {
			return ""
		}
		base = scheme + "://" + addr.String()
	}
	q := url.Values{}
	for k, v := range r.URL.Query() {
		if k != "$skip" && k != "$skiptoken" {
			q[k] = v
		}
	}
	q.Set("$skip", strconv.Itoa(p.skip+p.top))
	return base + r.URL.EscapedPath() + "?" + q.Encode()
}
