package sqlite_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
)

// TestDatabaseFilesArePrivate: with umask 0 the database, its WAL and its -shm file are created
// 0600, and an existing database and WAL left 0644 are made 0600 when opened.
func TestDatabaseFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	check := func(path string) {
		t.Helper()
		for _, f := range []string{path, path + "-wal", path + "-shm"} {
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, want 0600", filepath.Base(f), fi.Mode().Perm())
			}
		}
	}
	path := filepath.Join(t.TempDir(), "scheduler.db")
	d, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	// A write, so the WAL and -shm files exist.
	if _, _, err := d.CollectionPut(t.Context(), store.CollectionPutParams{Collection: store.Collection{
		Key: store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c"}}}); err != nil {
		t.Fatal(err)
	}
	check(path)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	// Files an older version or an operator left readable by all.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(path + "-shm")
	if err := os.WriteFile(path+"-wal", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path+"-wal", 0o644); err != nil {
		t.Fatal(err)
	}
	d, err = sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, _, err := d.CollectionPut(t.Context(), store.CollectionPutParams{Collection: store.Collection{
		Key: store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c2"}}}); err != nil {
		t.Fatal(err)
	}
	check(path)
}

// TestOpenRefusesReadOnlyDatabase: a database file that cannot be written is refused at Open with
// an error naming it. As root a mode does not stop writes, so the file is made immutable
// (chattr +i); the test is skipped where that is not possible.
func TestOpenRefusesReadOnlyDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scheduler.db")
	d, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	ReadOnly(t, path)
	_, err = sqlite.Open(t.Context(), path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open of a read-only database: %v, want an error naming %s", err, path)
	}
}

// ReadOnly makes path unwritable for this process: mode 0400 (0500 for a directory) for a user,
// chattr +i for root (whom modes do not stop); it skips the test when neither is possible, and
// undoes it at cleanup.
func ReadOnly(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o400)
		if fi.IsDir() {
			mode = 0o500
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(path, fi.Mode().Perm()) })
		return
	}
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Skipf("running as root and chattr +i %s failed (%v: %s): cannot make a file read-only for root here", path, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", path).Run() })
}
