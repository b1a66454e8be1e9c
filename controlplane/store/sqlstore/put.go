package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// PutRequest is one JobPut waiting for its group commit (groupcommit.Queue): the caller's context
// (checked when its group starts), what to write and the properties as the JSON to store. The
// driver leaves in it the job written (properties left to JobPut), whether it was created, and
// the error.
type PutRequest struct {
	Ctx    context.Context
	Params store.JobPutParams
	Body   string

	Out     *store.Job
	Created bool
	Err     error
}

// JobPut is store.Writer's JobPut for both drivers: the properties are encoded once (without
// their status), write stores the request (in a group or alone), and the job returned carries the
// properties as written: the caller's, not decoded again.
func JobPut(ctx context.Context, params store.JobPutParams, write func(*PutRequest)) (*store.Job, bool, error) {
	props := params.Job.Properties
	props.Status = nil
	body, err := json.Marshal(props)
	if err != nil {
		return nil, false, fmt.Errorf("job put: properties: %w", err)
	}
	r := &PutRequest{Ctx: ctx, Params: params, Body: string(body)}
	write(r)
	if r.Err != nil {
		return nil, false, fmt.Errorf("job put: %w", r.Err)
	}
	// The stored properties are those written: the caller's, not decoded again (store.Driver.JobPut).
	r.Out.Properties = props
	return r.Out, r.Created, nil
}
