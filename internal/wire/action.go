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
		RetryPolicy: a.RetryPolicy, Timeout: a.Timeout,
	}
}

// SecretField is a write-only field of an action: its path below the action in Azure spelling
// ("request.authentication.password") and a pointer to its value.
type SecretField struct {
	Path  string
	Value *string
}

// NamedSecretFields returns every write-only field of the action (passwords, pfx, OAuth secret,
// SAS token, SAS key) with its path, for sealing, opening, redacting and naming them in errors.
func (a *JobErrorAction) NamedSecretFields() []SecretField {
	if a == nil {
		return nil
	}
	var out []SecretField
	if r := a.Request; r != nil && r.Authentication != nil {
		out = append(out, SecretField{"request.authentication.password", &r.Authentication.Password},
			SecretField{"request.authentication.pfx", &r.Authentication.Pfx},
			SecretField{"request.authentication.secret", &r.Authentication.Secret})
	}
	if r := a.Request; r != nil && r.Signing != nil {
		out = append(out, SecretField{"request.signing.secret", &r.Signing.Secret},
			SecretField{"request.signing.previousSecret", &r.Signing.PreviousSecret})
	}
	if q := a.QueueMessage; q != nil {
		out = append(out, SecretField{"queueMessage.sasToken", &q.SasToken})
	}
	if m := a.ServiceBusQueueMessage; m != nil && m.Authentication != nil {
		out = append(out, SecretField{"serviceBusQueueMessage.authentication.sasKey", &m.Authentication.SasKey})
	}
	if m := a.ServiceBusTopicMessage; m != nil && m.Authentication != nil {
		out = append(out, SecretField{"serviceBusTopicMessage.authentication.sasKey", &m.Authentication.SasKey})
	}
	return out
}

// SecretFields returns pointers to every write-only field of the action (see NamedSecretFields).
func (a *JobErrorAction) SecretFields() []*string { return values(a.NamedSecretFields()) }

func values(fs []SecretField) []*string {
	if len(fs) == 0 {
		return nil
	}
	out := make([]*string, len(fs))
	for i, f := range fs {
		out[i] = f.Value
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
		r.Signing = clonePtr(r.Signing)
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

// NamedSecretFields returns every write-only field of the action and its error action with its
// path below the action ("errorAction.queueMessage.sasToken").
func (a *JobAction) NamedSecretFields() []SecretField {
	if a == nil {
		return nil
	}
	// Body shares the messages, so its pointers are a's.
	out := a.Body().NamedSecretFields()
	for _, f := range a.ErrorAction.NamedSecretFields() {
		out = append(out, SecretField{"errorAction." + f.Path, f.Value})
	}
	return out
}

// SecretFields returns pointers to every write-only field of the action and its error action.
func (a *JobAction) SecretFields() []*string { return values(a.NamedSecretFields()) }

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
		RetryPolicy: a.RetryPolicy, ErrorAction: a.ErrorAction.Clone(), Timeout: a.Timeout,
	}
}

// Clone returns a copy of the properties whose secret fields (Action.Clone), startTime,
// recurrence (its fields, not its schedule's lists), state and status can be written without
// touching p's: what the API changes in a stored job to answer with it.
func (p *JobProperties) Clone() JobProperties {
	c := *p
	c.Action = p.Action.Clone()
	c.Recurrence = clonePtr(p.Recurrence)
	c.Status = clonePtr(p.Status)
	return c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
