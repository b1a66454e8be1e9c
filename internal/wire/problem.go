package wire

import "strings"

// Problem is one thing wrong with an input: where (a JSON path relative to the job's or
// collection's properties, such as "recurrence.schedule.monthDays[2]"; "" for the whole
// document) and what is allowed.
type Problem struct {
	Path    string
	Message string
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Problems is every problem found in one input; as an error it lists them one per line.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}
