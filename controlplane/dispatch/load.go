package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// keys are what the loop derives from a job's properties to share its rule and its definition
// with other jobs: the schedule key (without the creation time) and the definition key, or why
// the definition cannot be kept.
type keys struct {
	schedule   string
	definition string
	err        error
}

// scheduleOf is the key of j's rule: the schedule key, and j's creation time when the job has no
// startTime (the creation time is then the anchor).
func (k keys) scheduleOf(j *store.Job) string {
	if j.Properties.StartTime != "" {
		return k.schedule
	}
	return k.schedule + "\x00" + j.CreatedAt.UTC().Format(time.RFC3339Nano)
}

// decoded is one properties text decoded, with its keys.
type decoded struct {
	props wire.JobProperties
	keys  keys
}

// decoder decodes the properties texts of listed jobs, each distinct text once: a million jobs
// that do the same thing at a few hundred instants are a few hundred texts, and decoding a text
// and encoding its keys was about 40 % of the load's CPU. It forgets what it holds past
// decoderSize texts (jobs that each do their own thing share nothing).
type decoder map[string]*decoded

const decoderSize = 4096

// decode sets j's properties from its PropertiesJSON (their pointers shared with the other jobs
// of the same text: read-only) and returns its keys.
func (c decoder) decode(j *store.Job) (keys, error) {
	d := c[j.PropertiesJSON]
	if d == nil {
		d = &decoded{}
		if err := json.Unmarshal([]byte(j.PropertiesJSON), &d.props); err != nil {
			return keys{}, fmt.Errorf("job %d properties: %w", j.ID, err)
		}
		d.keys.schedule = scheduleKey(&d.props)
		if d.keys.definition, d.keys.err = definitionKey(&d.props); d.keys.err != nil {
			d.keys.err = fmt.Errorf("encode job %d: %w", j.ID, d.keys.err)
		}
		if len(c) >= decoderSize {
			clear(c)
		}
		c[j.PropertiesJSON] = d
	}
	j.Properties, j.PropertiesJSON = d.props, ""
	return d.keys, nil
}

// listedPage is a page of schedulable jobs, decoded, with their keys; or the error that ended
// the listing.
type listedPage struct {
	jobs []*store.Job
	keys []keys
	err  error
}

// list reads the schedulable jobs of params (page by page; params.AfterID and Limit are its
// own) and calls fn with each, in ID order, on the caller's goroutine. The pages are read and
// decoded by a goroutine of their own, a page ahead of fn: on two cores, SQLite's reading and
// the decoding overlap with the building of the schedule.
func (l *loop) list(ctx context.Context, params store.JobListSchedulableParams, fn func(*store.Job, keys)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pages := make(chan listedPage, 1)
	go func() {
		defer close(pages)
		dec := decoder{}
		p := params
		p.Limit = listPage
		for {
			jobs, err := l.s.store.JobListSchedulable(ctx, p)
			page := listedPage{jobs: jobs, keys: make([]keys, len(jobs)), err: err}
			for i := 0; err == nil && i < len(jobs); i++ {
				page.keys[i], err = dec.decode(jobs[i])
				page.err = err
				p.AfterID = jobs[i].ID
			}
			select {
			case pages <- page:
			case <-ctx.Done():
				return
			}
			if err != nil || len(jobs) < listPage {
				return
			}
		}
	}()
	for page := range pages {
		if page.err != nil {
			return page.err
		}
		for i, j := range page.jobs {
			fn(j, page.keys[i])
		}
	}
	return ctx.Err()
}

// load reads the schedulable jobs into the schedule (the executions are the executor's: a single
// process's loads the unfinished ones, the replicas' take them).
func (l *loop) load(ctx context.Context) error {
	return l.list(ctx, store.JobListSchedulableParams{}, l.putKeyed)
}

// listPage is how many jobs list reads at a time: a query per 10,000 jobs instead of per 1,000
// takes a fifth less CPU per job loaded (BenchmarkLoad100kShared).
const listPage = 10_000
