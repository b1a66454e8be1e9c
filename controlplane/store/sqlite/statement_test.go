package sqlite

import (
	"math/bits"
	"path/filepath"
	"testing"
)

// TestChunksArePreparedSizes: every batch, whatever its size, goes in chunks of the sizes
// prepared once (1, 2, 4 ... rowsPerStatement rows), in order, with at most one chunk of each
// size below rowsPerStatement.
func TestChunksArePreparedSizes(t *testing.T) {
	prepared := map[int]bool{}
	for n := 1; n <= rowsPerStatement; n *= 2 {
		prepared[n] = true
	}
	if len(prepared) != bits.Len(rowsPerStatement) {
		t.Fatalf("%d sizes prepared, want %d", len(prepared), bits.Len(rowsPerStatement))
	}
	for rows := 1; rows <= 3*rowsPerStatement+1; rows++ {
		var sizes []int
		for rest := rows; rest > 0; {
			n := chunkSize(rest)
			if !prepared[n] || n > rest {
				t.Fatalf("%d rows: a chunk of %d with %d left (chunks so far %v)", rows, n, rest, sizes)
			}
			sizes = append(sizes, n)
			rest -= n
		}
		full := rows / rowsPerStatement
		want := full + bits.OnesCount(uint(rows%rowsPerStatement))
		if len(sizes) != want {
			t.Fatalf("%d rows: chunks %v, want %d chunks", rows, sizes, want)
		}
		for i := 1; i < len(sizes); i++ {
			if sizes[i] > sizes[i-1] || (sizes[i] == sizes[i-1] && sizes[i] != rowsPerStatement) {
				t.Fatalf("%d rows: chunks %v", rows, sizes)
			}
		}
	}
}

// TestWordsAreBoxedInPlace: the phases and history statuses every fire writes become statement
// arguments without an allocation, with their value; any other text keeps its value.
func TestWordsAreBoxedInPlace(t *testing.T) {
	for _, w := range []string{"MainAction", "ErrorAction", "Completed", "Failed"} {
		s := string([]byte(w)) // a string variable, as read from a record
		var got any
		if n := testing.AllocsPerRun(100, func() { got = word(s) }); n != 0 {
			t.Errorf("word(%q): %v allocations, want 0", w, n)
		}
		if got != any(w) {
			t.Errorf("word(%q) = %v", w, got)
		}
	}
	if got := word("Postponed"); got != any("Postponed") {
		t.Errorf("word(Postponed) = %v", got)
	}
}

// TestWriterJournalsStatementsInMemory: the writer connection keeps its temporary files (a
// multi-row statement's journal) in memory (temp_store 2), so that no statement creates a file.
func TestWriterJournalsStatementsInMemory(t *testing.T) {
	d, err := Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	var store int
	if err := d.w.QueryRowContext(t.Context(), "PRAGMA temp_store").Scan(&store); err != nil {
		t.Fatal(err)
	}
	if store != 2 {
		t.Errorf("temp_store %d, want 2 (MEMORY)", store)
	}
}
