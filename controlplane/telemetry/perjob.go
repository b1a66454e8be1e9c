package telemetry

import (
	"hash/maphash"
	"maps"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// collName is the subscription and collection label values, kept once per collection.
type collName struct{ subscription, collection string }

// jobRow is what a job's series hold: its finished executions by outcome and its last success,
// with its names (its collection as an index into seriesTable.colls).
type jobRow struct {
	n        [3]uint64 // completed, failed, faulted
	last     float64   // last success, unix seconds; 0 with hasLast false: no series yet
	job      string
	coll     uint32
	hasLast  bool
	hasOther bool // seriesTable.other holds outcomes of this row
}

// rowChunk is how many rows a chunk holds: rows never move once added, and a scrape copies
// one chunk at a time.
const rowChunk = 1024

// seriesTable holds the per-job series, about 60 bytes a job: the rows in chunks of rowChunk
// (values inline, no pointer per job), an open-addressing index of row numbers (4 bytes a
// slot, at most three quarters full) hashed from the job's collection and name, and each
// collection's names once. Rows are never removed (a deleted job's series stay until the
// daemon restarts), so a row number stays valid and colls only grows. The Collector's mu
// guards it.
type seriesTable struct {
	seed   maphash.Seed
	colls  []collName
	collOf map[collName]uint32
	chunks []*[rowChunk]jobRow
	n      uint32
	slots  []uint32                     // row number + 1; 0: free. len is a power of two
	other  map[uint32]map[string]uint64 // outcomes other than the three, by row (dispatch reports none)
}

func newSeriesTable() seriesTable {
	return seriesTable{seed: maphash.MakeSeed(), collOf: map[collName]uint32{}}
}

// add returns the row number of job k's series, adding a row when it has none (added).
func (t *seriesTable) add(k store.JobKey) (id uint32, added bool) {
	cn := collName{k.Subscription, k.CollectionKey.Name}
	coll, ok := t.collOf[cn]
	if !ok {
		coll = uint32(len(t.colls))
		t.colls = append(t.colls, cn)
		t.collOf[cn] = coll
	}
	if len(t.slots) > 0 {
		mask := uint64(len(t.slots) - 1)
		for i := t.hash(coll, k.Name) & mask; t.slots[i] != 0; i = (i + 1) & mask {
			if r := t.at(t.slots[i] - 1); r.coll == coll && r.job == k.Name {
				return t.slots[i] - 1, false
			}
		}
	}
	if (t.n+1)*4 > uint32(len(t.slots))*3 {
		t.grow()
	}
	id = t.n
	if int(id/rowChunk) == len(t.chunks) {
		t.chunks = append(t.chunks, new([rowChunk]jobRow))
	}
	t.n++
	r := t.at(id)
	r.job, r.coll = k.Name, coll
	t.place(id)
	return id, true
}

func (t *seriesTable) at(id uint32) *jobRow { return &t.chunks[id/rowChunk][id%rowChunk] }

func (t *seriesTable) hash(coll uint32, job string) uint64 {
	return maphash.String(t.seed, job) ^ (uint64(coll)+1)*0x9e3779b97f4a7c15
}

// place puts row id into the first free slot from its hash.
func (t *seriesTable) place(id uint32) {
	r := t.at(id)
	mask := uint64(len(t.slots) - 1)
	i := t.hash(r.coll, r.job) & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = id + 1
}

// grow doubles the index (64 slots at first) and places every row again.
func (t *seriesTable) grow() {
	t.slots = make([]uint32, max(64, 2*len(t.slots)))
	for id := range t.n {
		t.place(id)
	}
}

// outcomes are the outcomes every job that has finished an execution has a series of, in
// jobRow.n's order.
var outcomes = [3]string{dispatch.OutcomeCompleted, dispatch.OutcomeFailed, dispatch.OutcomeFaulted}

// observeJob counts o in its job's series and reports whether the job had none. c.mu is held.
func (c *Collector) observeJob(o dispatch.Outcome) (first bool) {
	t := &c.series
	id, first := t.add(o.Job)
	r := t.at(id)
	switch o.Outcome {
	case dispatch.OutcomeCompleted:
		r.n[0]++
		r.last, r.hasLast = float64(o.End.UnixNano())/1e9, true
	case dispatch.OutcomeFailed:
		r.n[1]++
	case dispatch.OutcomeFaulted:
		r.n[2]++
	default:
		if t.other == nil {
			t.other = map[uint32]map[string]uint64{}
		}
		if t.other[id] == nil {
			t.other[id] = map[string]uint64{}
		}
		t.other[id][o.Outcome]++
		r.hasOther = true
	}
	return first
}

// seedLastSuccess sets a job's last success read from the store unless a success observed
// meanwhile is newer. c.mu is held.
func (c *Collector) seedLastSuccess(k store.JobKey, at time.Time) {
	id, _ := c.series.add(k)
	r := c.series.at(id)
	if cur := r.last; cur == 0 || cur < float64(at.Unix()) {
		r.last, r.hasLast = float64(at.UnixNano())/1e9, true
	}
}

// seriesChunk is up to rowChunk rows copied under mu, with what writing them needs.
type seriesChunk struct {
	rows  []jobRow
	first uint32                       // the row number of rows[0]
	colls []collName                   // the collections' names (rows[i].coll indexes it)
	other map[uint32]map[string]uint64 // copies of the other outcomes of rows with hasOther
}

// eachChunk calls fn with each chunk of rows, copied under mu one at a time, so that a scrape
// holds up Observe for one chunk's copy at most and keeps one chunk's copy in memory, not all
// the series. Rows added meanwhile are in this scrape or the next.
func (c *Collector) eachChunk(fn func(seriesChunk)) {
	buf := make([]jobRow, rowChunk)
	for i := 0; ; i++ {
		c.mu.Lock()
		t := &c.series
		if i >= len(t.chunks) {
			c.mu.Unlock()
			return
		}
		ch := seriesChunk{first: uint32(i) * rowChunk, colls: t.colls}
		ch.rows = buf[:copy(buf, t.chunks[i][:min(rowChunk, t.n-ch.first)])]
		for j := range ch.rows {
			if ch.rows[j].hasOther {
				if ch.other == nil {
					ch.other = map[uint32]map[string]uint64{}
				}
				id := ch.first + uint32(j)
				ch.other[id] = maps.Clone(t.other[id])
			}
		}
		c.mu.Unlock()
		fn(ch)
	}
}

// perJobCollector exports the per-job series from Collector.series as client_golang metrics:
// the slow path, for the protobuf exposition formats (and tests). The text formats are written
// by writePerJob without building them (exposition.go).
type perJobCollector struct{ c *Collector }

func (p perJobCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- p.c.jobExecDesc
	ch <- p.c.lastSuccessDesc
}

func (p perJobCollector) Collect(ch chan<- prometheus.Metric) {
	p.c.eachChunk(func(sc seriesChunk) {
		for j := range sc.rows {
			r := &sc.rows[j]
			cn := sc.colls[r.coll]
			for i, oc := range outcomes {
				if i > 0 && r.n[i] == 0 {
					continue // failed and faulted only once they happened (see the package doc)
				}
				ch <- prometheus.MustNewConstMetric(p.c.jobExecDesc, prometheus.CounterValue, float64(r.n[i]), cn.subscription, cn.collection, r.job, oc)
			}
			for oc, n := range sc.other[sc.first+uint32(j)] {
				ch <- prometheus.MustNewConstMetric(p.c.jobExecDesc, prometheus.CounterValue, float64(n), cn.subscription, cn.collection, r.job, oc)
			}
			if r.hasLast {
				ch <- prometheus.MustNewConstMetric(p.c.lastSuccessDesc, prometheus.GaugeValue, r.last, cn.subscription, cn.collection, r.job)
			}
		}
	})
}
