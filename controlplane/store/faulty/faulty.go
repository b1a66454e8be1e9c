// Package faulty wraps a real store.Driver and makes chosen calls fail, so tests can show what a
// failed commit does (for the dispatcher: nothing is lost). It is a test aid around a real
// driver, not a fake store: every call that is not failed goes to the wrapped driver.
package faulty

import (
	"context"
	"errors"
	"sync"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// ErrInjected is the error an injected fault returns.
var ErrInjected = errors.New("injected fault")

// Driver is a store.Driver that fails the calls it is told to.
type Driver struct {
	store.Driver
	mu     sync.Mutex
	fail   map[string]int // method name → failures left (-1: until cleared)
	calls  map[string]int
	before map[string]func()
}

var _ store.Driver = (*Driver)(nil)

// Wrap wraps d.
func Wrap(d store.Driver) *Driver {
	return &Driver{Driver: d, fail: map[string]int{}, calls: map[string]int{}, before: map[string]func(){}}
}

// Fail makes the next n calls of method (such as "AttemptRecordMany") fail with ErrInjected
// before reaching the wrapped driver; n < 0 fails every call until Clear.
func (d *Driver) Fail(method string, n int) {
	d.mu.Lock()
	d.fail[method] = n
	d.mu.Unlock()
}

// Before runs fn (once) at the start of the next call of method, before it reaches the wrapped
// driver: a way to make something happen "at the same time" as that call (a concurrent API write
// just before a claim).
func (d *Driver) Before(method string, fn func()) {
	d.mu.Lock()
	d.before[method] = fn
	d.mu.Unlock()
}

// Clear stops failing method.
func (d *Driver) Clear(method string) { d.Fail(method, 0) }

// Calls returns how many times method was called (failed calls included).
func (d *Driver) Calls(method string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls[method]
}

func (d *Driver) check(method string) error {
	d.mu.Lock()
	fn := d.before[method]
	delete(d.before, method)
	d.mu.Unlock()
	if fn != nil {
		fn()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls[method]++
	switch n := d.fail[method]; {
	case n < 0:
		return ErrInjected
	case n > 0:
		d.fail[method] = n - 1
		return ErrInjected
	}
	return nil
}

// ExecutionClaimMany fails when told to, else claims.
func (d *Driver) ExecutionClaimMany(ctx context.Context, params store.ExecutionClaimManyParams) ([]store.ExecutionClaimResult, error) {
	if err := d.check("ExecutionClaimMany"); err != nil {
		return nil, err
	}
	return d.Driver.ExecutionClaimMany(ctx, params)
}

// AttemptRecordMany fails when told to, else records.
func (d *Driver) AttemptRecordMany(ctx context.Context, params store.AttemptRecordManyParams) ([]store.AttemptRecordResult, error) {
	if err := d.check("AttemptRecordMany"); err != nil {
		return nil, err
	}
	return d.Driver.AttemptRecordMany(ctx, params)
}

// JobGetByID fails when told to, else reads.
func (d *Driver) JobGetByID(ctx context.Context, params store.JobGetByIDParams) (*store.Job, error) {
	if err := d.check("JobGetByID"); err != nil {
		return nil, err
	}
	return d.Driver.JobGetByID(ctx, params)
}

// ExecutionBackfill fails when told to, else stores the backfill.
func (d *Driver) ExecutionBackfill(ctx context.Context, params store.ExecutionBackfillParams) (*store.ExecutionBackfillResult, error) {
	if err := d.check("ExecutionBackfill"); err != nil {
		return nil, err
	}
	return d.Driver.ExecutionBackfill(ctx, params)
}

// JobPut fails when told to, else writes.
func (d *Driver) JobPut(ctx context.Context, params store.JobPutParams) (*store.Job, bool, error) {
	if err := d.check("JobPut"); err != nil {
		return nil, false, err
	}
	return d.Driver.JobPut(ctx, params)
}

// JobGet fails when told to, else reads.
func (d *Driver) JobGet(ctx context.Context, params store.JobGetParams) (*store.Job, error) {
	if err := d.check("JobGet"); err != nil {
		return nil, err
	}
	return d.Driver.JobGet(ctx, params)
}

// JobGetWithCollection fails when told to, else reads.
func (d *Driver) JobGetWithCollection(ctx context.Context, params store.JobGetParams) (*store.Collection, *store.Job, error) {
	if err := d.check("JobGetWithCollection"); err != nil {
		return nil, nil, err
	}
	return d.Driver.JobGetWithCollection(ctx, params)
}

// CollectionGet fails when told to, else reads.
func (d *Driver) CollectionGet(ctx context.Context, params store.CollectionGetParams) (*store.Collection, error) {
	if err := d.check("CollectionGet"); err != nil {
		return nil, err
	}
	return d.Driver.CollectionGet(ctx, params)
}

// JobGetMany fails when told to, else reads.
func (d *Driver) JobGetMany(ctx context.Context, params store.JobGetManyParams) ([]*store.Job, error) {
	if err := d.check("JobGetMany"); err != nil {
		return nil, err
	}
	return d.Driver.JobGetMany(ctx, params)
}

// JobListSchedulable fails when told to, else reads.
func (d *Driver) JobListSchedulable(ctx context.Context, params store.JobListSchedulableParams) ([]*store.Job, error) {
	if err := d.check("JobListSchedulable"); err != nil {
		return nil, err
	}
	return d.Driver.JobListSchedulable(ctx, params)
}

// MetaPut fails when told to (a store that cannot commit, as /readyz's write probe sees it),
// else writes.
func (d *Driver) MetaPut(ctx context.Context, params store.MetaPutParams) error {
	if err := d.check("MetaPut"); err != nil {
		return err
	}
	return d.Driver.MetaPut(ctx, params)
}
