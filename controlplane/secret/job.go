package secret

import (
	"fmt"
	"strings"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Field is one write-only field of a job: its path in Azure spelling and a pointer to its value.
type Field = wire.SecretField

// NamedFields returns every write-only field of a job's action and error action with its path
// ("properties.action.request.authentication.password").
func NamedFields(p *wire.JobProperties) []Field {
	if p == nil {
		return nil
	}
	fs := p.Action.NamedSecretFields()
	for i := range fs {
		fs[i].Path = "properties.action." + fs[i].Path
	}
	return fs
}

// Fields returns pointers to every write-only field of a job's action and error action.
func Fields(p *wire.JobProperties) []*string {
	if p == nil {
		return nil
	}
	return p.Action.SecretFields()
}

// ClientSealed returns the path of the first write-only field of a client's job definition whose
// value looks sealed ("" when none): the API refuses it (400 naming the field), so that a sealed
// value read out of a database can never be handed back as a job's own secret.
func ClientSealed(p *wire.JobProperties) string {
	for _, f := range NamedFields(p) {
		if LooksSealed(*f.Value) {
			return f.Path
		}
	}
	return ""
}

// SealJob seals every write-only field of p in place, bound to the job owner.
func (b *Box) SealJob(p *wire.JobProperties, owner store.JobKey) error {
	for _, f := range Fields(p) {
		s, err := b.Seal(*f, owner)
		if err != nil {
			return err
		}
		*f = s
	}
	return nil
}

// OpenJob opens every write-only field of p in place (for the dispatcher, and for a PATCH that
// keeps the stored secrets); owner is the job p is stored as. The error names the field.
func (b *Box) OpenJob(p *wire.JobProperties, owner store.JobKey) error {
	for _, f := range NamedFields(p) {
		s, err := b.Open(*f.Value, owner)
		if err != nil {
			return fmt.Errorf("%s: %w", strings.TrimPrefix(f.Path, "properties."), err)
		}
		*f.Value = s
	}
	return nil
}

// RedactJob blanks every write-only field of p in place (for every read the API answers).
func RedactJob(p *wire.JobProperties) {
	for _, f := range Fields(p) {
		*f = ""
	}
}

// HasUnbound reports whether p holds a value sealed in the old unbound format (sealed:v1).
func HasUnbound(p *wire.JobProperties) bool {
	for _, f := range Fields(p) {
		if strings.HasPrefix(*f, prefixV1) {
			return true
		}
	}
	return false
}

// MigrateJob re-seals, bound to owner, every value of p sealed in the old unbound format; skip
// reports values that must not be migrated (the caller's: values found in more than one job),
// which are blanked instead. It returns how many values it re-sealed and blanked.
func (b *Box) MigrateJob(p *wire.JobProperties, owner store.JobKey, skip func(sealed string) bool) (resealed, blanked int, err error) {
	for _, f := range NamedFields(p) {
		v := *f.Value
		if !strings.HasPrefix(v, prefixV1) {
			continue
		}
		if skip != nil && skip(v) {
			*f.Value = ""
			blanked++
			continue
		}
		plain, err := b.open(v[len(prefixV1):], nil)
		if err != nil {
			return resealed, blanked, fmt.Errorf("%s: %w", f.Path, err)
		}
		s, err := b.Seal(plain, owner)
		if err != nil {
			return resealed, blanked, err
		}
		*f.Value = s
		resealed++
	}
	return resealed, blanked, nil
}
