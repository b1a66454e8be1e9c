package migrate_test

import (
	"testing"
	"testing/fstest"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/migrate"
)

func TestListOrdersTheFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"m/0002_b.sql": {Data: []byte("B")},
		"m/0001_a.sql": {Data: []byte("A")},
		"m/README":     {Data: []byte("not a migration")},
	}
	ms, err := migrate.List(fsys, "m")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0] != (migrate.Migration{Version: 1, Name: "0001_a.sql", Body: "A"}) ||
		ms[1] != (migrate.Migration{Version: 2, Name: "0002_b.sql", Body: "B"}) {
		t.Fatalf("migrations %+v", ms)
	}
}

func TestListRefusesABrokenNumbering(t *testing.T) {
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{[]string{"0001_a.sql", "0002_b.sql", "0002_c.sql"}, "migrations 0002_b.sql and 0002_c.sql: the same number twice"},
		{[]string{"0001_a.sql", "0003_c.sql"}, "migration 0003_c.sql: number 3 follows 1 (no gaps)"},
		{[]string{"0002_b.sql"}, "migration 0002_b.sql: number 2 follows 0 (no gaps)"},
		{[]string{"0001_a.sql", "2_b.sql"}, "migration 2_b.sql: the name must start with a four-digit number from 0001 and an underscore"},
		{[]string{"0000_a.sql"}, "migration 0000_a.sql: the name must start with a four-digit number from 0001 and an underscore"},
		{[]string{"0001a.sql"}, "migration 0001a.sql: the name must start with a four-digit number from 0001 and an underscore"},
	} {
		fsys := fstest.MapFS{}
		for _, f := range tc.files {
			fsys["m/"+f] = &fstest.MapFile{Data: []byte("SELECT 1")}
		}
		_, err := migrate.List(fsys, "m")
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v: error %v, want %q", tc.files, err, tc.want)
		}
	}
}
