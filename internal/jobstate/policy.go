package jobstate

// Overlap policies (SPEC 8 overlap): what happens to an occurrence that falls due while the
// job's previous execution is unfinished.
const (
	OverlapAllow     = "Allow"     // run it anyway (Azure's behaviour, the default)
	OverlapSkip      = "Skip"      // skip it, recording a Skipped history entry
	OverlapBufferOne = "BufferOne" // keep at most one waiting, run it when the previous one ends
)

// Misfire policies (SPEC 8 misfire): what happens to occurrences missed by more than the
// threshold.
const (
	MisfireRunOnce = "RunOnce" // coalesced into one run (SPEC 5, the default)
	MisfireSkip    = "Skip"    // skipped, recorded in one history entry
	MisfireRunAll  = "RunAll"  // each run, oldest first, at most MaxRunAll
)

// MaxRunAll is how many missed occurrences the RunAll misfire policy runs at most.
const MaxRunAll = 100

// OverlapPolicies and MisfirePolicies list the allowed names, the default first.
var (
	OverlapPolicies = []string{OverlapAllow, OverlapSkip, OverlapBufferOne}
	MisfirePolicies = []string{MisfireRunOnce, MisfireSkip, MisfireRunAll}
)
