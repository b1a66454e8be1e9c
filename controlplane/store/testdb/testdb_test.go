package testdb_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
)

// helperEnv marks the run of this test binary that TestHelperPostgres acts in.
const helperEnv = "TESTDB_HELPER"

// TestHelperPostgres opens PostgreSQL as a PostgreSQL test does; the tests below run it in a
// child process of this test binary under the environment they set.
func TestHelperPostgres(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("run by the tests of the skip path, in a child process")
	}
	testdb.Postgres(t)
	t.Log("PostgreSQL opened")
}

// child runs TestHelperPostgres with env (and neither variable otherwise) and returns its output
// and whether it passed.
func child(t *testing.T, env ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPostgres$", "-test.v", "-test.count=1")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, testdb.EnvPostgres+"=") && !strings.HasPrefix(kv, testdb.EnvStore+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append(env, helperEnv+"=1")...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("run the child: %v", err)
		}
	}
	return string(out), err == nil
}

// TestPostgresSkipsWithoutADatabase: with neither variable set (a machine without PostgreSQL), a
// PostgreSQL test skips and says which variable to set.
func TestPostgresSkipsWithoutADatabase(t *testing.T) {
	out, ok := child(t)
	if !ok || !strings.Contains(out, "--- SKIP: TestHelperPostgres") ||
		!strings.Contains(out, "needs PostgreSQL: set SCHEDULER_TEST_POSTGRES to a database URL") {
		t.Fatalf("passed %v, output:\n%s", ok, out)
	}
}

// TestPostgresNamedButUnreachableFails: a database named but not there (CI with PostgreSQL down)
// fails the test, through either variable: it is never a skip.
func TestPostgresNamedButUnreachableFails(t *testing.T) {
	const unreachable = "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=5"
	for _, v := range []string{testdb.EnvPostgres, testdb.EnvStore} {
		out, ok := child(t, v+"="+unreachable)
		if ok || !strings.Contains(out, "--- FAIL: TestHelperPostgres") || !strings.Contains(out, "postgres (SCHEDULER_TEST_POSTGRES): ") {
			t.Fatalf("%s unreachable: passed %v, output:\n%s", v, ok, out)
		}
	}
}

// TestPostgresOpensTheNamedDatabase: named and there, the database is opened (where this test
// itself has one).
func TestPostgresOpensTheNamedDatabase(t *testing.T) {
	out, ok := child(t, testdb.EnvPostgres+"="+testdb.PostgresURL(t))
	if !ok || !strings.Contains(out, "PostgreSQL opened") {
		t.Fatalf("passed %v, output:\n%s", ok, out)
	}
}
