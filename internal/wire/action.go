package wire

// Body returns the main action without its error action: the shape an attempt runs (an error
// action's). The messages are shared, not copied.
func (a *JobAction) Body() *JobErrorAction {
	if a == nil {
		return nil
	}
	return &JobErrorAction{
		Type: a.Type, Request: a.Request, QueueMessage: a.QueueMessage,
		ServiceBusQueueMessage: a.ServiceBusQueueMessage, ServiceBusTopicMessage: a.ServiceBusTopicMessage,
		RetryPolicy: a.RetryPolicy,
	}
}

// SecretFields returns pointers to every write-only field of the action (passwords, pfx, OAuth
// secret, SAS token, SAS key), for sealing, opening and redacting them.
func (a *JobErrorAction) SecretFields() []*string {
	if a == nil {
		return nil
	}
	var out []*string
	if r := a.Request; r != nil && r.Authentication != nil {
		out = append(out, &r.Authentication.Password, &r.Authentication.Pfx, &r.Authentication.Secret)
	}
	if q := a.QueueMessage; q != nil {
		out = append(out, &q.SasToken)
	}
	if m := a.ServiceBusQueueMessage; m != nil && m.Authentication != nil {
		out = append(out, &m.Authentication.SasKey)
	}
	if m := a.ServiceBusTopicMessage; m != nil && m.Authentication != nil {
		out = append(out, &m.Authentication.SasKey)
	}
	return out
}

// Clone returns a copy of the action whose secret fields can be written without touching a's.
func (a *JobErrorAction) Clone() *JobErrorAction {
	if a == nil {
		return nil
	}
	c := *a
	if a.Request != nil {
		r := *a.Request
		r.Authentication = clonePtr(r.Authentication)
		c.Request = &r
	}
	c.QueueMessage = clonePtr(a.QueueMessage)
	if m := a.ServiceBusQueueMessage; m != nil {
		x := *m
		x.Authentication = clonePtr(m.Authentication)
		c.ServiceBusQueueMessage = &x
	}
	if m := a.ServiceBusTopicMessage; m != nil {
		x := *m
		x.Authentication = clonePtr(m.Authentication)
		c.ServiceBusTopicMessage = &x
	}
	return &c
}

// SecretFields returns pointers to every write-only field of the action and its error action.
func (a *JobAction) SecretFields() []*string {
	if a == nil {
		return nil
	}
	// Body shares the messages, so its pointers are a's.
	return append(a.Body().SecretFields(), a.ErrorAction.SecretFields()...)
}

// Clone returns a copy of the action (and its error action) whose secret fields can be written
// without touching a's.
func (a *JobAction) Clone() *JobAction {
	if a == nil {
		return nil
	}
	b := a.Body().Clone()
	return &JobAction{
		Type: b.Type, Request: b.Request, QueueMessage: b.QueueMessage,
		ServiceBusQueueMessage: b.ServiceBusQueueMessage, ServiceBusTopicMessage: b.ServiceBusTopicMessage,
		RetryPolicy: a.RetryPolicy, ErrorAction: a.ErrorAction.Clone(),
	}
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
