package brokertest

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Azurite's well-known development account (documented by Microsoft; not a secret).
const (
	AzuriteAccount = "devstoreaccount1"
	AzuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	// StorageVersion is the REST version the helpers speak and sign.
	StorageVersion = "2019-12-12"
)

// Azurite is a running Azurite queue service.
type Azurite struct {
	// URL is the service's base address (http://127.0.0.1:port); an account's queue service is
	// URL + "/" + account.
	URL string
}

// Endpoint is the --storage-queue-endpoint template that reaches this Azurite.
func (a *Azurite) Endpoint() string { return a.URL + "/{account}" }

var listening = regexp.MustCompile(`successfully listens on (http://\S+)`)

// StartAzurite starts Azurite's queue service in memory on a free port; it stops with the test.
func StartAzurite(t testing.TB) *Azurite {
	t.Helper()
	bin := tool(t, "azurite.sh")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--queueHost", "127.0.0.1", "--queuePort", "0", "--inMemoryPersistence",
		"--extentMemoryLimit", "256", "--silent")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start azurite: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
			log.WriteString(sc.Text() + "\n")
		}
		close(found)
	}()
	select {
	case u, ok := <-found:
		if !ok {
			t.Fatalf("azurite exited before listening:\n%s", log.String())
		}
		go func() { _, _ = io.Copy(io.Discard, out) }()
		return &Azurite{URL: u}
	case <-time.After(60 * time.Second):
		t.Fatal("azurite did not listen within 60 s")
	}
	return nil
}

// AccountSAS returns an account SAS token (without "?") for the queue service of the development
// account, signed with its key, valid for an hour: permissions such as "a" (add) or "rwdlacup".
func AccountSAS(permissions string) string {
	return accountSAS(AzuriteAccount, AzuriteKey, permissions, time.Now().Add(time.Hour))
}

func accountSAS(account, key, permissions string, expiry time.Time) string {
	se := expiry.UTC().Format("2006-01-02T15:04:05Z")
	toSign := strings.Join([]string{account, permissions, "q", "sco", "", se, "", "", StorageVersion, ""}, "\n")
	k, _ := base64.StdEncoding.DecodeString(key)
	mac := hmac.New(sha256.New, k)
	mac.Write([]byte(toSign))
	v := url.Values{"sv": {StorageVersion}, "ss": {"q"}, "srt": {"sco"}, "sp": {permissions}, "se": {se},
		"sig": {base64.StdEncoding.EncodeToString(mac.Sum(nil))}}
	return v.Encode()
}

func (a *Azurite) do(t testing.TB, method, path, query string, want ...int) []byte {
	t.Helper()
	req, err := http.NewRequest(method, a.URL+"/"+AzuriteAccount+path+"?"+AccountSAS("rwdlacup")+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-ms-version", StorageVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("azurite %s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	for _, w := range want {
		if resp.StatusCode == w {
			return b
		}
	}
	t.Fatalf("azurite %s %s: %s\n%s", method, path, resp.Status, b)
	return nil
}

// CreateQueue creates a queue of the development account.
func (a *Azurite) CreateQueue(t testing.TB, name string) {
	t.Helper()
	a.do(t, http.MethodPut, "/"+name, "", http.StatusCreated, http.StatusNoContent)
}

// Messages dequeues up to 32 messages of a queue (Get Messages) and returns their texts as
// stored.
func (a *Azurite) Messages(t testing.TB, queue string) []string {
	t.Helper()
	b := a.do(t, http.MethodGet, "/"+queue+"/messages", "&numofmessages=32", http.StatusOK)
	var list struct {
		Messages []struct {
			MessageText string `xml:"MessageText"`
		} `xml:"QueueMessage"`
	}
	if err := xml.Unmarshal(b, &list); err != nil {
		t.Fatalf("azurite Get Messages: %v\n%s", err, b)
	}
	out := make([]string, 0, len(list.Messages))
	for _, m := range list.Messages {
		out = append(out, m.MessageText)
	}
	return out
}

// WaitMessages polls a queue until it holds n messages (or fails the test after timeout).
func (a *Azurite) WaitMessages(t testing.TB, queue string, n int, timeout time.Duration) []string {
	t.Helper()
	var got []string
	deadline := time.Now().Add(timeout)
	for len(got) < n {
		if time.Now().After(deadline) {
			t.Fatalf("queue %s: %d message(s) after %s, want %d", queue, len(got), timeout, n)
		}
		got = append(got, a.Messages(t, queue)...)
		if len(got) < n {
			time.Sleep(50 * time.Millisecond)
		}
	}
	return got
}
