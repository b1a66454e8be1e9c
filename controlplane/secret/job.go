package secret

import "github.com/schedulerhq/terraform-provider-scheduler/internal/wire"

// Fields returns pointers to every write-only field of a job's action and error action.
func Fields(p *wire.JobProperties) []*string {
	if p == nil {
		return nil
	}
	return p.Action.SecretFields()
}

// SealJob seals every write-only field of p in place.
func (b *Box) SealJob(p *wire.JobProperties) error {
	for _, f := range Fields(p) {
		s, err := b.Seal(*f)
		if err != nil {
			return err
		}
		*f = s
	}
	return nil
}

// OpenJob opens every write-only field of p in place (for the dispatcher only).
func (b *Box) OpenJob(p *wire.JobProperties) error {
	for _, f := range Fields(p) {
		s, err := b.Open(*f)
		if err != nil {
			return err
		}
		*f = s
	}
	return nil
}

// RedactJob blanks every write-only field of p in place (for every read the API answers).
func RedactJob(p *wire.JobProperties) {
	for _, f := range Fields(p) {
		*f = ""
	}
}
