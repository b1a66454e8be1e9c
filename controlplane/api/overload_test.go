package api

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// blockingRunDispatcherFake stands in for the dispatcher: its RunNow says it was entered and
// waits for release, so that a /run request holds its in-flight slot as long as a test wants.
type blockingRunDispatcherFake struct {
	noopDispatcherFake
	entered chan struct{}
	release chan struct{}
}

func (d *blockingRunDispatcherFake) RunNow(ctx context.Context, j *store.Job) error {
	d.entered <- struct{}{}
	<-d.release
	return d.noopDispatcherFake.RunNow(ctx, j)
}

// holdRun sends POST /run of job j1 of the collection at coll with token and returns once the
// request holds its slot; the channel gets its status when it is released.
func holdRun(t *testing.T, h *harness, d *blockingRunDispatcherFake, coll, token string) <-chan int {
	t.Helper()
	status := make(chan int, 1)
	go func() {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, h.srv.URL+coll+"/jobs/j1/run"+apiVersion, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := h.srv.Client().Do(req)
		if err != nil {
			status <- 0
			return
		}
		_ = resp.Body.Close()
		status <- resp.StatusCode
	}()
	select {
	case <-d.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not reach the dispatcher")
	}
	return status
}

func newBlockingHarness(t *testing.T, maxInFlight, perTenant int) (*harness, *blockingRunDispatcherFake) {
	t.Helper()
	d := &blockingRunDispatcherFake{entered: make(chan struct{}, 8), release: make(chan struct{})}
	h := newHarness(t, func(c *Config) {
		c.Dispatcher, c.MaxInFlight, c.MaxInFlightPerTenant = d, maxInFlight, perTenant
	})
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	h.must(http.StatusCreated, http.MethodPut, jobPath, `{"properties":{`+httpsAction+`}}`)
	return h, d
}

// TestServerBusy: beyond MaxInFlight concurrent requests the API answers 503 ServerBusy with
// Retry-After, and serves again once the slot is free.
func TestServerBusy(t *testing.T) {
	h, d := newBlockingHarness(t, 1, 1)
	held := holdRun(t, h, d, collPath, adminToken)
	busy := h.do(http.MethodGet, collPath+apiVersion, adminToken, nil)
	if code, msg := busy.errorBody(t); busy.status != 503 || code != "ServerBusy" || busy.header.Get("Retry-After") != "1" ||
		msg != "too many requests in flight; retry later" {
		t.Fatalf("with the slot taken: %d %s %q", busy.status, code, msg)
	}
	close(d.release)
	if st := <-held; st != http.StatusOK {
		t.Fatalf("the held run: %d", st)
	}
	h.must(200, http.MethodGet, collPath+apiVersion, nil)
}

// TestInFlightLimitIsPerTenant: a subscription with MaxInFlightPerTenant requests in flight gets
// 503 for more; another subscription is answered.
func TestInFlightLimitIsPerTenant(t *testing.T) {
	h, d := newBlockingHarness(t, 8, 1)
	held := holdRun(t, h, d, collPath, subAToken)
	busy := h.do(http.MethodGet, collPath+apiVersion, subAToken, nil)
	if code, msg := busy.errorBody(t); busy.status != 503 || code != "ServerBusy" ||
		msg != "too many requests of this subscription in flight (at most 1 at a time); retry later" {
		t.Fatalf("tenant A with its slot taken: %d %s %q", busy.status, code, msg)
	}
	h.must(http.StatusCreated, http.MethodPut, strings.Replace(collPath, "sub-a", "sub-b", 1)+apiVersion,
		`{"location":"local","properties":{"sku":{"name":"Standard"}}}`)
	close(d.release)
	if st := <-held; st != http.StatusOK {
		t.Fatalf("the held run: %d", st)
	}
	h.must(200, http.MethodGet, collPath+apiVersion, nil)
}

// TestSlowBodiesOfOneTenantLeaveTheOthersAnswered: 300 requests of tenant A whose bodies trickle
// in hold no in-flight slot (bodies are read before a slot is taken): tenant B, and A's own
// complete requests, are answered; the slow ones get 408 once BodyTimeout is over. Over real
// TCP connections.
func TestSlowBodiesOfOneTenantLeaveTheOthersAnswered(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxInFlight, c.MaxInFlightPerTenant, c.BodyTimeout = 8, 4, 3*time.Second })
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	body := `{"properties":{` + httpsAction + `}}`
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for i := range 300 {
		conn, err := net.Dial("tcp", h.srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
		head := "PUT " + collPath + "/jobs/slow" + strconv.Itoa(i) + apiVersion + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + subAToken +
			"\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
		if _, err := io.WriteString(conn, head+body[:5]); err != nil {
			t.Fatal(err)
		}
	}
	collB := strings.Replace(collPath, "sub-a", "sub-b", 1)
	h.must(http.StatusCreated, http.MethodPut, collB+apiVersion, `{"location":"local","properties":{"sku":{"name":"Standard"}}}`)
	h.must(http.StatusCreated, http.MethodPut, collB+"/jobs/j1"+apiVersion, body)
	if r := h.do(http.MethodGet, collPath+apiVersion, subAToken, nil); r.status != http.StatusOK {
		t.Fatalf("tenant A's complete request: %d %s", r.status, r.body)
	}
	if err := conns[0].SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conns[0]), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), `"code":"RequestTimeout"`) ||
		!strings.Contains(string(b), "the request body did not arrive within 3s") {
		t.Fatalf("a slow body: %d %s", resp.StatusCode, b)
	}
}
