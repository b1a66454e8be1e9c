package secret_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/faulty"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

func jobKey(sub, job string) store.JobKey {
	return store.JobKey{CollectionKey: store.CollectionKey{Subscription: sub, ResourceGroup: "rg", Name: "c"}, Name: job}
}

func newBox(t *testing.T) (*secret.Box, []byte) {
	t.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	b, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return b, key
}

// TestSealedValueOpensOnlyForItsJob: a value sealed for one job opens for that job (its name in
// any ASCII case) and for no other, nor under another key.
func TestSealedValueOpensOnlyForItsJob(t *testing.T) {
	b, _ := newBox(t)
	victim := jobKey("sub1", "payroll")
	s, err := b.Seal("hunter2", victim)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s, "sealed:v2:") || strings.Contains(s, "hunter2") {
		t.Fatalf("sealed value %q", s)
	}
	for _, owner := range []store.JobKey{victim, jobKey("SUB1", "PayRoll")} {
		if got, err := b.Open(s, owner); err != nil || got != "hunter2" {
			t.Errorf("Open for %v: %q, %v", owner, got, err)
		}
	}
	other, _ := newBox(t)
	for name, tc := range map[string]struct {
		box   *secret.Box
		owner store.JobKey
	}{
		"another job":               {b, jobKey("sub1", "payroll2")},
		"another subscription":      {b, jobKey("sub2", "payroll")},
		"a look-alike subscription": {b, jobKey("ſub1", "payroll")},
		"another key":               {other, victim},
	} {
		got, err := tc.box.Open(s, tc.owner)
		if !errors.Is(err, secret.ErrWrongOwner) || got != "" {
			t.Errorf("%s: Open = %q, %v; want ErrWrongOwner", name, got, err)
		}
	}
	// A value that only looks sealed is sealed like any other (never stored as given).
	s2, err := b.Seal(s, jobKey("sub2", "thief"))
	if err != nil || s2 == s {
		t.Fatalf("Seal of a sealed-looking value: %q %v", s2, err)
	}
}

// sealV1 seals plain as a daemon before 0.1.0 did: AES-256-GCM, no associated data.
func sealV1(t *testing.T, key []byte, plain string) string {
	t.Helper()
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		t.Fatal(err)
	}
	return "sealed:v1:" + base64.StdEncoding.EncodeToString(aead.Seal(nonce, nonce, []byte(plain), nil))
}

// TestOldUnboundValueDoesNotOpen: a sealed:v1 value (bound to no job) is not opened outside the
// start-up migration.
func TestOldUnboundValueDoesNotOpen(t *testing.T) {
	b, key := newBox(t)
	v1 := sealV1(t, key, "hunter2")
	if got, err := b.Open(v1, jobKey("sub1", "j")); err == nil || got != "" {
		t.Fatalf("Open of a v1 value: %q, %v", got, err)
	}
}

// TestClientSealed names the first field whose value looks sealed, in any case.
func TestClientSealed(t *testing.T) {
	p := &wire.JobProperties{Action: &wire.JobAction{
		Request: &wire.HTTPRequest{Authentication: &wire.HTTPAuthentication{Password: "plain"}},
		ErrorAction: &wire.JobErrorAction{
			QueueMessage: &wire.StorageQueueMessage{SasToken: "SEALED:v9:xyz"},
		},
	}}
	if got := secret.ClientSealed(p); got != "properties.action.errorAction.queueMessage.sasToken" {
		t.Fatalf("ClientSealed = %q", got)
	}
	p.Action.ErrorAction.QueueMessage.SasToken = "not sealed:"
	if got := secret.ClientSealed(p); got != "" {
		t.Fatalf("ClientSealed = %q", got)
	}
}

// env is a store on a real SQLite file and a key path beside it.
type env struct {
	dir, keyPath string
	st           *sqlite.Driver
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(t.Context(), filepath.Join(dir, "scheduler.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if _, _, err := st.CollectionPut(t.Context(), store.CollectionPutParams{Collection: store.Collection{
		Key: store.CollectionKey{Subscription: "sub1", ResourceGroup: "rg", Name: "c"}}}); err != nil {
		t.Fatal(err)
	}
	return &env{dir: dir, keyPath: filepath.Join(dir, "secret.key"), st: st}
}

// put stores a job whose Basic password is the value given as is (sealed by the caller).
func (e *env) put(t *testing.T, name, password string) *store.Job {
	t.Helper()
	j, _, err := e.st.JobPut(t.Context(), store.JobPutParams{Now: time.Now(), Job: store.Job{
		Key: jobKey("sub1", name), State: store.JobStateDisabled,
		Properties: wire.JobProperties{Action: &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{
			URI: "http://127.0.0.1:1/", Method: "GET",
			Authentication: &wire.HTTPAuthentication{Type: "Basic", Username: "u", Password: password},
		}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func (e *env) password(t *testing.T, name string) string {
	t.Helper()
	j, err := e.st.JobGet(t.Context(), store.JobGetParams{Key: jobKey("sub1", name)})
	if err != nil {
		t.Fatal(err)
	}
	return j.Properties.Action.Request.Authentication.Password
}

func logTo(buf *bytes.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(buf, nil)) }

// TestStartupCreatesTheKeyOnlyOnAFirstStart: an empty store gets a new key (0600) and its check
// value; later starts with the same key pass.
func TestStartupCreatesTheKeyOnlyOnAFirstStart(t *testing.T) {
	e := newEnv(t)
	var logs bytes.Buffer
	b, err := secret.Startup(t.Context(), e.st, e.keyPath, logTo(&logs))
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(e.keyPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	if !strings.Contains(logs.String(), "created the secret key") {
		t.Errorf("log: %s", logs.String())
	}
	check, err := e.st.MetaGet(t.Context(), store.MetaGetParams{Name: store.MetaSecretKeyCheck})
	if err != nil || check != b.Check() {
		t.Fatalf("stored check %q %v, want %q", check, err, b.Check())
	}
	b2, err := secret.Startup(t.Context(), e.st, e.keyPath, nil)
	if err != nil || b2.Check() != b.Check() {
		t.Fatalf("second start: %v", err)
	}
}

// TestStartupRefusesAMissingOrChangedKey: with sealed secrets (or a check value) in the store, a
// missing key file or another key stops the start with an error naming the file, and no key is
// written.
func TestStartupRefusesAMissingOrChangedKey(t *testing.T) {
	t.Run("missing with a check value", func(t *testing.T) {
		e := newEnv(t)
		if _, err := secret.Startup(t.Context(), e.st, e.keyPath, nil); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(e.keyPath); err != nil {
			t.Fatal(err)
		}
		_, err := secret.Startup(t.Context(), e.st, e.keyPath, nil)
		if err == nil || !strings.Contains(err.Error(), "secret key "+e.keyPath+" is missing") {
			t.Fatalf("Startup without its key: %v", err)
		}
		if _, err := os.Stat(e.keyPath); !os.IsNotExist(err) {
			t.Fatalf("a key file was written: %v", err)
		}
	})
	t.Run("missing with sealed values and no check value", func(t *testing.T) {
		e := newEnv(t)
		b, _ := newBox(t)
		s, err := b.Seal("hunter2", jobKey("sub1", "j"))
		if err != nil {
			t.Fatal(err)
		}
		e.put(t, "j", s)
		_, err = secret.Startup(t.Context(), e.st, e.keyPath, nil)
		if err == nil || !strings.Contains(err.Error(), "secret key "+e.keyPath+" is missing") {
			t.Fatalf("Startup without its key: %v", err)
		}
		if _, err := os.Stat(e.keyPath); !os.IsNotExist(err) {
			t.Fatalf("a key file was written: %v", err)
		}
	})
	t.Run("changed", func(t *testing.T) {
		e := newEnv(t)
		if _, err := secret.Startup(t.Context(), e.st, e.keyPath, nil); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(e.keyPath); err != nil {
			t.Fatal(err)
		}
		if _, err := secret.Create(e.keyPath); err != nil {
			t.Fatal(err)
		}
		_, err := secret.Startup(t.Context(), e.st, e.keyPath, nil)
		if err == nil || !strings.Contains(err.Error(), "secret key "+e.keyPath+" is not the key") {
			t.Fatalf("Startup with another key: %v", err)
		}
	})
	t.Run("changed, no check value yet", func(t *testing.T) {
		e := newEnv(t)
		b, _ := newBox(t)
		s, err := b.Seal("hunter2", jobKey("sub1", "j"))
		if err != nil {
			t.Fatal(err)
		}
		e.put(t, "j", s)
		if _, err := secret.Create(e.keyPath); err != nil {
			t.Fatal(err)
		}
		_, err = secret.Startup(t.Context(), e.st, e.keyPath, nil)
		if err == nil || !strings.Contains(err.Error(), "secret key "+e.keyPath+" does not open") {
			t.Fatalf("Startup with another key: %v", err)
		}
		if _, err := e.st.MetaGet(t.Context(), store.MetaGetParams{Name: store.MetaSecretKeyCheck}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a check value was stored: %v", err)
		}
	})
}

// TestStartupMigratesOldValues: sealed:v1 values of an older database are re-sealed bound to the
// job holding them (and open for it alone); a v1 value found in two jobs (copied out of one into
// the other) is removed from both and logged, never delivered.
func TestStartupMigratesOldValues(t *testing.T) {
	e := newEnv(t)
	b, err := secret.Create(e.keyPath)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(e.keyPath)
	if err != nil {
		t.Fatal(err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	e.put(t, "own", sealV1(t, key, "own-secret"))
	stolen := sealV1(t, key, "victim-secret")
	e.put(t, "victim", stolen)
	e.put(t, "thief", stolen)
	e.put(t, "none", "")
	var logs bytes.Buffer
	b2, err := secret.Startup(t.Context(), e.st, e.keyPath, logTo(&logs))
	if err != nil {
		t.Fatal(err)
	}
	if b2.Check() != b.Check() {
		t.Fatal("another key")
	}
	own := e.password(t, "own")
	if !secret.IsSealed(own) {
		t.Fatalf("own: %q not re-sealed", own)
	}
	if got, err := b.Open(own, jobKey("sub1", "own")); err != nil || got != "own-secret" {
		t.Fatalf("own after migration: %q %v", got, err)
	}
	if _, err := b.Open(own, jobKey("sub1", "thief")); !errors.Is(err, secret.ErrWrongOwner) {
		t.Fatalf("own opened for thief: %v", err)
	}
	for _, name := range []string{"victim", "thief", "none"} {
		if got := e.password(t, name); got != "" {
			t.Errorf("%s: password %q after migration, want removed", name, got)
		}
	}
	for _, want := range []string{"more than one job", "/jobs/victim", "/jobs/thief", "re-sealed secrets of the old format"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	// A second start has nothing left to migrate.
	logs.Reset()
	if _, err := secret.Startup(t.Context(), e.st, e.keyPath, logTo(&logs)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "re-sealed") {
		t.Errorf("second start migrated again:\n%s", logs.String())
	}
}

// listCounter counts the jobs JobListAll returns.
type listCounter struct {
	store.Driver
	listed int
}

func (c *listCounter) JobListAll(ctx context.Context, p store.JobListAllParams) ([]*store.Job, error) {
	jobs, err := c.Driver.JobListAll(ctx, p)
	c.listed += len(jobs)
	return jobs, err
}

// TestStartupWithACheckValueReadsOnlyOldValues: once the store keeps the key's check value, a
// start reads only the jobs holding a value of the old format (none of a million jobs without
// one), and still re-seals those.
func TestStartupWithACheckValueReadsOnlyOldValues(t *testing.T) {
	e := newEnv(t)
	b, err := secret.Startup(t.Context(), e.st, e.keyPath, nil) // first start: the key and its check value
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := b.Seal("s3cret", jobKey("sub1", "sealed"))
	if err != nil {
		t.Fatal(err)
	}
	e.put(t, "sealed", sealed)
	e.put(t, "plain", "")
	counted := &listCounter{Driver: e.st}
	if _, err := secret.Startup(t.Context(), counted, e.keyPath, nil); err != nil {
		t.Fatal(err)
	}
	if counted.listed != 0 {
		t.Fatalf("a start read %d jobs, want 0 (none holds a value of the old format)", counted.listed)
	}

	raw, err := os.ReadFile(e.keyPath)
	if err != nil {
		t.Fatal(err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	e.put(t, "old", sealV1(t, key, "old-secret"))
	counted.listed = 0
	if _, err := secret.Startup(t.Context(), counted, e.keyPath, nil); err != nil {
		t.Fatal(err)
	}
	if counted.listed != 1 {
		t.Fatalf("a start read %d jobs, want 1 (the one holding a value of the old format)", counted.listed)
	}
	old := e.password(t, "old")
	if got, err := b.Open(old, jobKey("sub1", "old")); err != nil || got != "old-secret" {
		t.Fatalf("old after migration: %q %v", got, err)
	}
}

// TestStartupReplicasAgreeOnOneKey: two replicas starting together on an empty store, each with
// its own key file: the check value stored first wins, and the replica with the other key stops
// instead of sealing with a key the others do not share.
func TestStartupReplicasAgreeOnOneKey(t *testing.T) {
	e := newEnv(t)
	other, _ := newBox(t)
	st := faulty.Wrap(e.st)
	// The other replica stores its check value between this one's read and its write.
	st.Before("MetaPut", func() {
		if err := e.st.MetaPut(t.Context(), store.MetaPutParams{Name: store.MetaSecretKeyCheck, Value: other.Check()}); err != nil {
			t.Error(err)
		}
	})
	_, err := secret.Startup(t.Context(), st, e.keyPath, nil)
	if err == nil || !strings.Contains(err.Error(), "secret key "+e.keyPath+" is not the key another replica stored first") {
		t.Fatalf("Startup racing another replica's key: %v", err)
	}
	if got, _ := e.st.MetaGet(t.Context(), store.MetaGetParams{Name: store.MetaSecretKeyCheck}); got != other.Check() {
		t.Fatalf("the first replica's check value was replaced: %q", got)
	}
}
