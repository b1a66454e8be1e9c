package secret

import "github.com/schedulerhq/terraform-provider-scheduler/internal/wire"

// secretFields returns pointers to every write-only field of an action.
func secretFields(req *wire.HTTPRequest, q *wire.StorageQueueMessage, sbq *wire.ServiceBusQueueMessage, sbt *wire.ServiceBusTopicMessage) []*string {
	var out []*string
	if req != nil && req.Authentication != nil {
		a := req.Authentication
		out = append(out, &a.Password, &a.Pfx, &a.Secret)
	}
	if q != nil {
		out = append(out, &q.SasToken)
	}
	if sbq != nil && sbq.Authentication != nil {
		out = append(out, &sbq.Authentication.SasKey)
	}
	if sbt != nil && sbt.Authentication != nil {
		out = append(out, &sbt.Authentication.SasKey)
	}
	return out
}

// Fields returns pointers to every write-only field of a job's action and error action.
func Fields(p *wire.JobProperties) []*string {
	if p == nil || p.Action == nil {
		return nil
	}
	a := p.Action
	out := secretFields(a.Request, a.QueueMessage, a.ServiceBusQueueMessage, a.ServiceBusTopicMessage)
	if e := a.ErrorAction; e != nil {
		out = append(out, secretFields(e.Request, e.QueueMessage, e.ServiceBusQueueMessage, e.ServiceBusTopicMessage)...)
	}
	return out
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
