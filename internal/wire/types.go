package wire

// APIVersion is the Azure Scheduler REST API version the daemon speaks; APIVersionOld is also accepted.
const (
	APIVersion    = "2016-03-01"
	APIVersionOld = "2016-01-01"
)

// Resource types as they appear in the "type" field of ARM bodies.
const (
	TypeJobCollection = "Microsoft.Scheduler/jobCollections"
	TypeJob           = "Microsoft.Scheduler/jobCollections/jobs"
	TypeJobHistory    = "Microsoft.Scheduler/jobCollections/jobs/history"
)

// JobCollectionDefinition is a job collection resource.
type JobCollectionDefinition struct {
	ID         string                   `json:"id,omitempty"`
	Type       string                   `json:"type,omitempty"`
	Name       string                   `json:"name,omitempty"`
	Location   string                   `json:"location,omitempty"`
	Tags       map[string]string        `json:"tags,omitempty"`
	Properties *JobCollectionProperties `json:"properties,omitempty"`
}

// JobCollectionProperties are the properties of a job collection.
type JobCollectionProperties struct {
	Sku   *Sku                `json:"sku,omitempty"`
	State string              `json:"state,omitempty"` // Enabled, Disabled, Suspended, Deleted
	Quota *JobCollectionQuota `json:"quota,omitempty"`
}

// Sku names the pricing tier: Free, Standard, P10Premium, P20Premium.
type Sku struct {
	Name string `json:"name,omitempty"`
}

// JobCollectionQuota overrides the SKU's limits.
type JobCollectionQuota struct {
	MaxJobCount      *int              `json:"maxJobCount,omitempty"`
	MaxJobOccurrence *int              `json:"maxJobOccurrence,omitempty"`
	MaxRecurrence    *JobMaxRecurrence `json:"maxRecurrence,omitempty"`
}

// JobMaxRecurrence is the fastest recurrence a collection allows.
type JobMaxRecurrence struct {
	Frequency string `json:"frequency,omitempty"`
	Interval  *int   `json:"interval,omitempty"`
}

// JobCollectionListResult is one page of job collections.
type JobCollectionListResult struct {
	Value    []JobCollectionDefinition `json:"value"`
	NextLink string                    `json:"nextLink,omitempty"`
}

// JobDefinition is a job resource.
type JobDefinition struct {
	ID         string         `json:"id,omitempty"`
	Type       string         `json:"type,omitempty"`
	Name       string         `json:"name,omitempty"`
	Properties *JobProperties `json:"properties,omitempty"`
}

// JobProperties are the properties of a job. Times are ISO 8601 strings exactly as written
// (see recurrence.ParseTime); the daemon returns them in RFC 3339.
type JobProperties struct {
	StartTime  string         `json:"startTime,omitempty"`
	Action     *JobAction     `json:"action,omitempty"`
	Recurrence *JobRecurrence `json:"recurrence,omitempty"`
	State      string         `json:"state,omitempty"`  // Enabled, Disabled, Completed, Faulted
	Status     *JobStatus     `json:"status,omitempty"` // read-only

	// Extensions (SPEC 8), absent unless set.
	Overlap  string      `json:"overlap,omitempty"`  // Allow (default), Skip, BufferOne
	Misfire  *JobMisfire `json:"misfire,omitempty"`  // what happens to occurrences missed by more than a threshold
	ResumeAt string      `json:"resumeAt,omitempty"` // date-time at which a Disabled job becomes Enabled by itself
	Note     string      `json:"note,omitempty"`     // why the job is paused (at most 512 characters)
}

// JobMisfire is a job's misfire policy (extension).
type JobMisfire struct {
	Policy    string `json:"policy,omitempty"`    // RunOnce (default), Skip, RunAll
	Threshold string `json:"threshold,omitempty"` // ISO 8601 duration; default the daemon's
}

// JobAction is what a job does at each execution.
type JobAction struct {
	Type                   string                  `json:"type,omitempty"` // Http, Https, StorageQueue, ServiceBusQueue, ServiceBusTopic
	Request                *HTTPRequest            `json:"request,omitempty"`
	QueueMessage           *StorageQueueMessage    `json:"queueMessage,omitempty"`
	ServiceBusQueueMessage *ServiceBusQueueMessage `json:"serviceBusQueueMessage,omitempty"`
	ServiceBusTopicMessage *ServiceBusTopicMessage `json:"serviceBusTopicMessage,omitempty"`
	RetryPolicy            *RetryPolicy            `json:"retryPolicy,omitempty"`
	ErrorAction            *JobErrorAction         `json:"errorAction,omitempty"`
	// Timeout (extension, SPEC 8): how long one attempt may take, an ISO 8601 duration
	// PT1S..PT30M; absent means PT60S.
	Timeout string `json:"timeout,omitempty"`
}

// JobErrorAction runs when the main action's retries are spent. Same shape as JobAction without
// a nested error action.
type JobErrorAction struct {
	Type                   string                  `json:"type,omitempty"`
	Request                *HTTPRequest            `json:"request,omitempty"`
	QueueMessage           *StorageQueueMessage    `json:"queueMessage,omitempty"`
	ServiceBusQueueMessage *ServiceBusQueueMessage `json:"serviceBusQueueMessage,omitempty"`
	ServiceBusTopicMessage *ServiceBusTopicMessage `json:"serviceBusTopicMessage,omitempty"`
	RetryPolicy            *RetryPolicy            `json:"retryPolicy,omitempty"`
	Timeout                string                  `json:"timeout,omitempty"` // extension: see JobAction.Timeout
}

// HTTPRequest is an Http or Https action.
type HTTPRequest struct {
	Authentication *HTTPAuthentication `json:"authentication,omitempty"`
	URI            string              `json:"uri,omitempty"`
	Method         string              `json:"method,omitempty"`
	Body           string              `json:"body,omitempty"`
	Headers        map[string]string   `json:"headers,omitempty"`
	Signing        *HTTPSigning        `json:"signing,omitempty"` // extension (SPEC 8)
}

// HTTPSigning signs every attempt as the Standard Webhooks specification says (extension, SPEC 8).
// Secret and PreviousSecret ("whsec_" + base64 of 24..64 bytes) are write-only: never returned.
// During a rotation each request carries one signature per secret.
type HTTPSigning struct {
	Secret         string `json:"secret,omitempty"`
	PreviousSecret string `json:"previousSecret,omitempty"`
}

// HTTPAuthentication is outbound authentication: Basic, ClientCertificate, ActiveDirectoryOAuth
// (or NotSpecified). Password, Pfx and Secret are write-only: never returned.
type HTTPAuthentication struct {
	Type string `json:"type,omitempty"`
	// Basic
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"` // Basic and ClientCertificate
	// ClientCertificate
	Pfx                       string `json:"pfx,omitempty"` // base64 PKCS#12
	CertificateThumbprint     string `json:"certificateThumbprint,omitempty"`
	CertificateExpirationDate string `json:"certificateExpirationDate,omitempty"`
	CertificateSubjectName    string `json:"certificateSubjectName,omitempty"`
	// ActiveDirectoryOAuth
	Secret   string `json:"secret,omitempty"`
	Tenant   string `json:"tenant,omitempty"`
	Audience string `json:"audience,omitempty"`
	ClientID string `json:"clientId,omitempty"`
}

// StorageQueueMessage is a StorageQueue action. SasToken is write-only.
type StorageQueueMessage struct {
	StorageAccount string `json:"storageAccount,omitempty"`
	QueueName      string `json:"queueName,omitempty"`
	SasToken       string `json:"sasToken,omitempty"`
	Message        string `json:"message,omitempty"`
}

// ServiceBusMessage holds what queue and topic messages share.
type ServiceBusMessage struct {
	Authentication            *ServiceBusAuthentication            `json:"authentication,omitempty"`
	BrokeredMessageProperties *ServiceBusBrokeredMessageProperties `json:"brokeredMessageProperties,omitempty"`
	CustomMessageProperties   map[string]string                    `json:"customMessageProperties,omitempty"`
	Message                   string                               `json:"message,omitempty"`
	Namespace                 string                               `json:"namespace,omitempty"`
	TransportType             string                               `json:"transportType,omitempty"` // NotSpecified, NetMessaging, AMQP
}

// ServiceBusQueueMessage is a ServiceBusQueue action.
type ServiceBusQueueMessage struct {
	ServiceBusMessage
	QueueName string `json:"queueName,omitempty"`
}

// ServiceBusTopicMessage is a ServiceBusTopic action.
type ServiceBusTopicMessage struct {
	ServiceBusMessage
	TopicPath string `json:"topicPath,omitempty"`
}

// ServiceBusAuthentication is SharedAccessKey authentication. SasKey is write-only.
type ServiceBusAuthentication struct {
	SasKey     string `json:"sasKey,omitempty"`
	SasKeyName string `json:"sasKeyName,omitempty"`
	Type       string `json:"type,omitempty"` // NotSpecified, SharedAccessKey
}

// ServiceBusBrokeredMessageProperties are the brokered message's system properties.
type ServiceBusBrokeredMessageProperties struct {
	ContentType             string `json:"contentType,omitempty"`
	CorrelationID           string `json:"correlationId,omitempty"`
	ForcePersistence        *bool  `json:"forcePersistence,omitempty"`
	Label                   string `json:"label,omitempty"`
	MessageID               string `json:"messageId,omitempty"`
	PartitionKey            string `json:"partitionKey,omitempty"`
	ReplyTo                 string `json:"replyTo,omitempty"`
	ReplyToSessionID        string `json:"replyToSessionId,omitempty"`
	ScheduledEnqueueTimeUtc string `json:"scheduledEnqueueTimeUtc,omitempty"`
	SessionID               string `json:"sessionId,omitempty"`
	TimeToLive              string `json:"timeToLive,omitempty"`
	To                      string `json:"to,omitempty"`
	ViaPartitionKey         string `json:"viaPartitionKey,omitempty"`
}

// RetryPolicy says how a failed attempt is retried.
type RetryPolicy struct {
	RetryType     string `json:"retryType,omitempty"`     // None, Fixed, Exponential (extension)
	RetryInterval string `json:"retryInterval,omitempty"` // ISO 8601 duration or hh:mm:ss
	RetryCount    *int   `json:"retryCount,omitempty"`
	// MaxRetryInterval (extension, Exponential only) caps the delay between retries; absent
	// means PT1H.
	MaxRetryInterval string `json:"maxRetryInterval,omitempty"`
}

// JobRecurrence is when a job repeats (SPEC 4).
type JobRecurrence struct {
	Frequency string                 `json:"frequency,omitempty"` // Minute, Hour, Day, Week, Month
	Interval  *int                   `json:"interval,omitempty"`
	Count     *int                   `json:"count,omitempty"`
	EndTime   string                 `json:"endTime,omitempty"`
	TimeZone  string                 `json:"timeZone,omitempty"` // IANA name (extension)
	Schedule  *JobRecurrenceSchedule `json:"schedule,omitempty"`
	// Jitter is an ISO 8601 duration (extension): each occurrence starts up to this much later.
	Jitter string `json:"jitter,omitempty"`
	// ExcludeDates are dates YYYY-MM-DD in the rule's zone on which it does not run (extension).
	ExcludeDates []string `json:"excludeDates,omitempty"`
}

// JobRecurrenceSchedule narrows or widens a recurrence.
type JobRecurrenceSchedule struct {
	WeekDays           []string                                 `json:"weekDays,omitempty"`
	Hours              []int                                    `json:"hours,omitempty"`
	Minutes            []int                                    `json:"minutes,omitempty"`
	MonthDays          []int                                    `json:"monthDays,omitempty"`
	MonthlyOccurrences []JobRecurrenceScheduleMonthlyOccurrence `json:"monthlyOccurrences,omitempty"`
}

// JobRecurrenceScheduleMonthlyOccurrence is "the Nth weekday of the month".
type JobRecurrenceScheduleMonthlyOccurrence struct {
	Day        string `json:"day,omitempty"`
	Occurrence *int   `json:"Occurrence,omitempty"` // spelled so in the 2016-03-01 swagger; "occurrence" is accepted too
}

// JobStatus is read-only execution state.
type JobStatus struct {
	ExecutionCount    *int   `json:"executionCount,omitempty"`
	FailureCount      *int   `json:"failureCount,omitempty"`
	FaultedCount      *int   `json:"faultedCount,omitempty"`
	LastExecutionTime string `json:"lastExecutionTime,omitempty"`
	NextExecutionTime string `json:"nextExecutionTime,omitempty"`
}

// JobListResult is one page of jobs.
type JobListResult struct {
	Value    []JobDefinition `json:"value"`
	NextLink string          `json:"nextLink,omitempty"`
}

// JobHistoryDefinition is one attempt of one execution.
type JobHistoryDefinition struct {
	ID         string                          `json:"id,omitempty"`
	Type       string                          `json:"type,omitempty"`
	Name       string                          `json:"name,omitempty"`
	Properties *JobHistoryDefinitionProperties `json:"properties,omitempty"`
}

// JobHistoryDefinitionProperties describe one attempt.
type JobHistoryDefinitionProperties struct {
	StartTime             string `json:"startTime,omitempty"`
	EndTime               string `json:"endTime,omitempty"`
	ExpectedExecutionTime string `json:"expectedExecutionTime,omitempty"`
	ActionName            string `json:"actionName,omitempty"` // MainAction, ErrorAction
	Status                string `json:"status,omitempty"`     // Completed, Failed, Postponed
	Message               string `json:"message,omitempty"`
	RetryCount            int    `json:"retryCount"`
	RepeatCount           int    `json:"repeatCount"`
}

// JobHistoryListResult is one page of history, newest first.
type JobHistoryListResult struct {
	Value    []JobHistoryDefinition `json:"value"`
	NextLink string                 `json:"nextLink,omitempty"`
}

// ErrorResponse is the Azure error body.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody carries an Azure error code (BadRequest, AuthenticationFailed, ResourceNotFound,
// Conflict, InternalError, ServerBusy) and a message.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// JobBackfillRequest is the body of POST .../jobs/{job}/backfill (extension): the occurrences of
// [from, to) to run, date-times read in the job's zone when they carry no offset.
type JobBackfillRequest struct {
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// JobBackfillResponse is the 202 answer to a backfill (extension): how many executions it runs,
// one after the other, and the expected time of the first and of the last.
type JobBackfillResponse struct {
	Count int    `json:"count"`
	First string `json:"first"`
	Last  string `json:"last"`
}
