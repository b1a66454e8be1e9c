package dispatch

import (
	"encoding/json"
	"fmt"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// definitions shares what the loop's entries keep of their jobs' properties for their attempts
// (the properties as JSON, secrets sealed, recurrence left out: it is in the entry's rule),
// counting the entries that use each. Jobs that do the same thing (the same action, headers,
// body and retry policy: often most of them) share one copy, and its decoded properties, so an
// occurrence is claimed without decoding anything: json.Unmarshal was 6 % of the daemon's CPU
// per fire, and the JSON strings 38 % of its heap, with 100,000 jobs.
type definitions map[string]*sharedDef

// sharedDef is one definition and the entries that use it.
type sharedDef struct {
	key  string // the properties as JSON: the map's key
	refs int
	// target (interned) and misfire are the main action's target and the misfire rule, the
	// same for every job of the definition.
	target  string
	misfire jobstate.Misfire
	overlap string // the overlap policy (jobstate.OverlapPolicies, canonical)
	// props is key decoded, read-only (an attempt opens its secrets in a copy: openSecrets),
	// kept once the definition is shared (refs > 1) and an occurrence of it was claimed: a
	// decoded job is a few dozen small objects that every garbage collection marks, worth it
	// when shared, not for every one of a million distinct jobs.
	props *wire.JobProperties
}

// definitionKey is what an entry keeps of a job's properties (its definitions key): what an attempt
// reads (the action, the misfire rule and overlap policy), not what it does not (the startTime and recurrence,
// kept in the entry's rule; the state, status, resumeAt and note), which would keep jobs that do
// the same thing apart.
func definitionKey(props *wire.JobProperties) (string, error) {
	p := *props
	p.StartTime, p.Recurrence, p.Status, p.State, p.ResumeAt, p.Note = "", nil, nil, "", "", ""
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("definition: %w", err)
	}
	return string(b), nil
}

// acquireDef returns the shared definition of key (j's), counted until releaseDef.
func (l *loop) acquireDef(key string, j *store.Job) *sharedDef {
	if d := l.defs[key]; d != nil {
		d.refs++
		return d
	}
	d := &sharedDef{key: key, refs: 1, target: l.intern(l.s.target(j.Properties, store.ActionMain)), misfire: l.s.misfire(&j.Properties),
		overlap: jobdef.OverlapOf(&j.Properties)}
	l.defs[key] = d
	return d
}

func (l *loop) releaseDef(d *sharedDef) {
	if d == nil {
		return
	}
	if d.refs--; d.refs <= 0 && l.defs[d.key] == d {
		delete(l.defs, d.key)
		l.releaseTarget(d.target)
	}
}

// properties returns the definition decoded (shared, read-only).
func (d *sharedDef) properties() (*wire.JobProperties, error) {
	if d.props != nil {
		return d.props, nil
	}
	var p wire.JobProperties
	if err := json.Unmarshal([]byte(d.key), &p); err != nil {
		return nil, fmt.Errorf("decode definition: %w", err)
	}
	if d.refs > 1 {
		d.props = &p
	}
	return &p, nil
}

// collections shares the key of each collection between the entries of its jobs, by collection
// ID, counting them.
type collections map[int64]*sharedColl

type sharedColl struct {
	id   int64
	key  store.CollectionKey
	refs int
}

func (c collections) acquire(id int64, key store.CollectionKey) *sharedColl {
	if s := c[id]; s != nil {
		s.refs++
		return s
	}
	s := &sharedColl{id: id, key: key, refs: 1}
	c[id] = s
	return s
}

func (c collections) release(s *sharedColl) {
	if s == nil {
		return
	}
	if s.refs--; s.refs <= 0 && c[s.id] == s {
		delete(c, s.id)
	}
}
