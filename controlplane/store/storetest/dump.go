package storetest

import (
	"slices"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// DumpCoversSchema fails when a table of d's schema is neither copied by a move
// (store.DumpTables) nor named in store.NotDumped, when a column of a copied table is neither
// copied nor derived, or when a listed column does not exist: a migration that adds a table or a
// column must say whether `schedulerd migrate` moves it.
func DumpCoversSchema(t *testing.T, d store.Dumper) {
	t.Helper()
	schema, err := d.Schema(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(schema) == 0 {
		t.Fatal("the schema lists no table")
	}
	listed := map[string]store.DumpTable{}
	for _, tab := range store.DumpTables() {
		listed[tab.Name] = tab
	}
	skipped := store.NotDumped()
	for table, columns := range schema {
		tab, ok := listed[table]
		if !ok {
			if _, ok := skipped[table]; !ok {
				t.Errorf("table %s is neither in store.DumpTables (copied by a move) nor in store.NotDumped (left behind, with the reason)", table)
			}
			continue
		}
		for _, c := range columns {
			_, derived := tab.Derived[c]
			copied := slices.ContainsFunc(tab.Columns, func(dc store.DumpColumn) bool { return dc.Name == c })
			if !derived && !copied {
				t.Errorf("column %s.%s is neither copied nor derived in store.DumpTables", table, c)
			}
		}
	}
	for _, tab := range store.DumpTables() {
		columns, ok := schema[tab.Name]
		if !ok {
			t.Errorf("store.DumpTables copies table %s, which the schema does not have", tab.Name)
			continue
		}
		for _, c := range tab.Columns {
			if !slices.Contains(columns, c.Name) {
				t.Errorf("store.DumpTables copies column %s.%s, which the schema does not have", tab.Name, c.Name)
			}
		}
		for c := range tab.Derived {
			if !slices.Contains(columns, c) {
				t.Errorf("store.DumpTables derives column %s.%s, which the schema does not have", tab.Name, c)
			}
		}
	}
}
