package jobdef

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

var created = time.Date(2026, 11, 18, 12, 0, 30, 0, time.UTC)

func props(t *testing.T, js string) *wire.JobProperties {
	t.Helper()
	var p wire.JobProperties
	if err := wire.Decode([]byte(js), &p); err != nil {
		t.Fatalf("decode %s: %v", js, err)
	}
	return &p
}

func TestValidateProblems(t *testing.T) {
	headers := map[string]string{}
	for i := range 51 {
		headers["X-H"+strings.Repeat("x", i)] = "v"
	}
	manyHeaders, _ := json.Marshal(headers)
	for _, tc := range []struct {
		name string
		js   string
		want []string
	}{
		{"no action", `{}`, []string{"action: is required"}},
		{"no type", `{"action":{"request":{"uri":"http://e.com","method":"GET"}}}`,
			[]string{"action.type: is required (one of Http, Https, StorageQueue, ServiceBusQueue, ServiceBusTopic)"}},
		{"type without its message", `{"action":{"type":"Https"}}`, []string{"action.request: is required for a Https action"}},
		{"message of another type", `{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET"},"queueMessage":{"queueName":"q"}}}`,
			[]string{"action.queueMessage: is not allowed with a Https action (it takes request)"}},
		{"relative uri, bad method", `{"action":{"type":"Http","request":{"uri":"/x","method":"FETCH"}}}`, []string{
			`action.request.uri: "/x" is not an absolute http or https URI`,
			`action.request.method: "FETCH" is not one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS`,
		}},
		{"uri too long", `{"action":{"type":"Http","request":{"uri":"http://e.com/` + strings.Repeat("a", 2040) + `","method":"GET"}}}`,
			[]string{"action.request.uri: is 2053 characters long; at most 2048 are allowed"}},
		{"too many headers", `{"action":{"type":"Http","request":{"uri":"http://e.com","method":"GET","headers":` + string(manyHeaders) + `}}}`,
			[]string{"action.request.headers: has 51 headers; at most 50 are allowed"}},
		{"header chars", `{"action":{"type":"Http","request":{"uri":"http://e.com","method":"GET","headers":{"A":"` + strings.Repeat("v", 4096) + `"}}}}`,
			[]string{"action.request.headers: have 4097 characters (names and values); at most 4096 are allowed"}},
		{"bad header name", `{"action":{"type":"Http","request":{"uri":"http://e.com","method":"GET","headers":{"Bad Name":"v"}}}}`,
			[]string{`action.request.headers: "Bad Name" is not a valid header name`}},
		{"oauth fields", `{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET","authentication":{"type":"activedirectoryoauth","tenant":"t"}}}}`, []string{
			"action.request.authentication.audience: is required for ActiveDirectoryOAuth authentication",
			"action.request.authentication.clientId: is required for ActiveDirectoryOAuth authentication",
			"action.request.authentication.secret: is required for ActiveDirectoryOAuth authentication",
		}},
		{"pfx not base64", `{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET","authentication":{"type":"ClientCertificate","pfx":"%%%"}}}}`,
			[]string{"action.request.authentication.pfx: is not base64"}},
		{"retry policy", `{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET"},"retryPolicy":{"retryType":"Fixed","retryInterval":"PT5S","retryCount":21}}}`, []string{
			`action.retryPolicy.retryInterval: "PT5S" is 5s, below the minimum of 15s`,
			"action.retryPolicy.retryCount: 21 is outside 0..20",
		}},
		{"error action", `{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET"},"errorAction":{"type":"Http","request":{"uri":"https://e.com","method":"GET"},"retryPolicy":{"retryType":"Sometimes"}}}}`, []string{
			`action.errorAction.request.uri: the scheme "https" does not match the action type Http (it must be http)`,
			`action.errorAction.retryPolicy.retryType: "Sometimes" is not one of None, Fixed, Exponential`,
		}},
		{"timeouts", `{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET"},"timeout":"PT31M","errorAction":{"type":"Https","request":{"uri":"https://e.com","method":"GET"},"timeout":"PT0S"}}}`, []string{
			`action.timeout: "PT31M" is 31m0s, outside PT1S..PT30M`,
			`action.errorAction.timeout: "PT0S" is 0s, outside PT1S..PT30M`,
		}},
		{"exponential cap below the interval", `{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET"},"retryPolicy":{"retryType":"Exponential","retryInterval":"PT1M","maxRetryInterval":"PT30S"}}}`,
			[]string{`action.retryPolicy.maxRetryInterval: "PT30S" is 30s, below the retryInterval of 1m0s`}},
		{"signing secrets", `{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET","signing":{"secret":"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw","previousSecret":"whsec_AAAA"}}}}`, []string{
			`action.request.signing.secret: must start with "whsec_"`,
			"action.request.signing.previousSecret: decodes to 3 bytes; 24 to 64 are allowed",
		}},
		{"signing secret not base64, too long", `{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET","signing":{"secret":"whsec_not base64!","previousSecret":"whsec_` + strings.Repeat("A", 88) + `"}}}}`, []string{
			"action.request.signing.secret: must be whsec_ followed by standard base64",
			"action.request.signing.previousSecret: decodes to 66 bytes; 24 to 64 are allowed",
		}},
		{"signing without a secret", `{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET","signing":{"previousSecret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}}}`,
			[]string{"action.request.signing.secret: is required for signing"}},
		{"signing on a storage queue action", `{"action":{"type":"StorageQueue","queueMessage":{"storageAccount":"acct","queueName":"queue","sasToken":"sv=1&sig=x","message":"m"},"request":{"signing":{"secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}}}`, []string{
			"action.request: is not allowed with a StorageQueue action (it takes queueMessage)",
			"action.request.signing: is allowed only on Http and Https actions (a StorageQueue action sends no HTTP request)",
		}},
		{"service bus", `{"action":{"type":"ServiceBusTopic","serviceBusTopicMessage":{"topicPath":"t","namespace":"n"}}}`, []string{
			`action.serviceBusTopicMessage.namespace: "n" is not a Service Bus namespace: 6 to 50 letters, digits and hyphens, starting with a letter and not ending with a hyphen`,
			"action.serviceBusTopicMessage.authentication: is required (type SharedAccessKey with sasKeyName and sasKey)",
		}},
		{"service bus fields", `{"action":{"type":"ServiceBusQueue","serviceBusQueueMessage":{"queueName":"q\u0001","namespace":"my-bus","transportType":"Pigeon",` +
			`"authentication":{"type":"SharedAccessKey","sasKey":"k"},"brokeredMessageProperties":{"timeToLive":"soon","scheduledEnqueueTimeUtc":"tomorrow","messageId":"` + strings.Repeat("m", 129) + `"},` +
			`"customMessageProperties":{"":"x"}}}}`, []string{
			`action.serviceBusQueueMessage.queueName: "q\x01" contains a character a Service Bus entity name cannot have (control characters, \, ?, #)`,
			`action.serviceBusQueueMessage.transportType: "Pigeon" is not one of NotSpecified, NetMessaging, AMQP`,
			"action.serviceBusQueueMessage.authentication.sasKeyName: is required",
			"action.serviceBusQueueMessage.brokeredMessageProperties.messageId: is 129 characters long; at most 128 are allowed",
			`action.serviceBusQueueMessage.brokeredMessageProperties.timeToLive: "soon" is not a positive duration (ISO 8601 such as PT10M, or d.hh:mm:ss)`,
			`action.serviceBusQueueMessage.brokeredMessageProperties.scheduledEnqueueTimeUtc: "tomorrow" is not an ISO 8601 date-time`,
			`action.serviceBusQueueMessage.customMessageProperties: "" is not a property name (empty or control characters)`,
		}},
		{"storage queue", `{"action":{"type":"StorageQueue","queueMessage":{"storageAccount":"Acct","queueName":"a--b","sasToken":"secret-token"}}}`, []string{
			`action.queueMessage.storageAccount: "Acct" is not a storage account name: 3 to 24 lower-case letters and digits`,
			`action.queueMessage.queueName: "a--b" is not a queue name: 3 to 63 lower-case letters, digits and single hyphens, starting and ending with a letter or digit`,
			"action.queueMessage.sasToken: is not a shared access signature (a query string with sig=...)",
			"action.queueMessage.message: is required",
		}},
		{"faulted state", `{"state":"FAULTED","action":{"type":"Https","request":{"uri":"https://e.com","method":"GET"}}}`,
			[]string{"state: Faulted is set by the scheduler; a job can be written Enabled or Disabled"}},
		{"rule and action together", `{"action":{"type":"Https","request":{"uri":"ftp://e.com","method":"GET"}},"recurrence":{"frequency":"Month","schedule":{"monthDays":[0]}}}`, []string{
			`action.request.uri: the scheme "ftp" does not match the action type Https (it must be https)`,
			"recurrence.schedule.monthDays[0]",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rule, ps := Validate(props(t, tc.js), created)
			if rule != nil {
				t.Errorf("a rule for an invalid job")
			}
			if len(ps) != len(tc.want) {
				t.Fatalf("problems:\n%v\nwant:\n%s", ps, strings.Join(tc.want, "\n"))
			}
			for i, p := range ps {
				if !strings.HasPrefix(p.String(), tc.want[i]) {
					t.Errorf("problem %d: %q, want %q", i, p.String(), tc.want[i])
				}
			}
		})
	}
}

func TestValidateDefinitionSize(t *testing.T) {
	headers := map[string]string{}
	for i := range 40 {
		headers["X-Header-"+strings.Repeat("h", i)] = strings.Repeat("v", 60)
	}
	h, _ := json.Marshal(headers)
	body := strings.Repeat("b", 8000)
	js := `{"action":{"type":"Https","request":{"uri":"https://e.com","method":"POST","body":"` + body + `","headers":` + string(h) + `},` +
		`"errorAction":{"type":"Https","request":{"uri":"https://e.com","method":"POST","body":"` + body + `"}}}}`
	_, ps := Validate(props(t, js), created)
	if len(ps) != 1 || ps[0].Path != "" || !strings.HasPrefix(ps[0].Message, "the job definition is ") ||
		!strings.HasSuffix(ps[0].Message, "bytes of JSON; at most 16384 (16 KiB) are allowed") {
		t.Fatalf("problems %v", ps)
	}
}

func TestValidateAndNormalizeAcceptsSDKShapes(t *testing.T) {
	// What Microsoft's SDK sends: authentication type HttpAuthentication means none, the
	// monthly occurrence's "Occurrence" member is capitalized.
	p := props(t, `{"startTime":"2026-12-01T08:00:00+02:00","action":{"type":"https","request":{"uri":"https://e.com/x","method":"post",`+
		`"authentication":{"type":"HttpAuthentication"},"headers":{"X-A":"1"}},"retryPolicy":{"retryType":"fixed","retryInterval":"00:01:00","retryCount":2}},`+
		`"recurrence":{"frequency":"month","endTime":"2027-06-01","schedule":{"monthlyOccurrences":[{"day":"friday","Occurrence":-1}]}},"state":"enabled"}`)
	Normalize(p)
	rule, ps := Validate(p, created)
	if len(ps) > 0 {
		t.Fatalf("problems %v", ps)
	}
	FormatTimes(p, rule)
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"startTime":"2026-12-01T08:00:00+02:00","action":{"type":"Https","request":{"authentication":{"type":"HttpAuthentication"},"uri":"https://e.com/x","method":"POST","headers":{"X-A":"1"}},` +
		`"retryPolicy":{"retryType":"Fixed","retryInterval":"00:01:00","retryCount":2}},` +
		`"recurrence":{"frequency":"Month","endTime":"2027-06-01T00:00:00+02:00","schedule":{"monthlyOccurrences":[{"day":"Friday","Occurrence":-1}]}},"state":"Enabled"}`
	if string(b) != want {
		t.Fatalf("normalized\n%s\nwant\n%s", b, want)
	}
	// Compiling the formatted times gives the same rule.
	again, err := recurrence.Compile(p.StartTime, p.Recurrence, created)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Anchor().Equal(rule.Anchor()) || again.Location().String() != rule.Location().String() {
		t.Fatalf("anchor %v %v, was %v %v", again.Anchor(), again.Location(), rule.Anchor(), rule.Location())
	}
	if HasAuthentication(p.Action.Request) {
		t.Error("HttpAuthentication counted as outbound authentication")
	}
}

func TestCheckLimits(t *testing.T) {
	now := created
	action := `"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET"}}`
	for _, tc := range []struct {
		name, js string
		limits   Limits
		want     string // the limit violated; "" for none
	}{
		{"hourly on Free", `{` + action + `,"recurrence":{"frequency":"Hour"}}`, SkuLimits(SkuFree), ""},
		{"every 59 minutes on Free", `{` + action + `,"recurrence":{"frequency":"Minute","interval":59}}`, SkuLimits(SkuFree), "maxRecurrence"},
		{"two hours a day, 1 hour apart", `{` + action + `,"recurrence":{"frequency":"Day","schedule":{"hours":[10,11]}}}`, Limits{MaxRecurrence: Period{"Hour", 2}, Authentication: true}, "maxRecurrence"},
		{"weekly vs 1 week", `{` + action + `,"recurrence":{"frequency":"Week"}}`, Limits{MaxRecurrence: Period{"Week", 1}, Authentication: true}, ""},
		{"monthly on the 31st vs 1 month", `{"startTime":"2027-01-31T00:00:00Z",` + action + `,"recurrence":{"frequency":"Month"}}`, Limits{MaxRecurrence: Period{"Month", 1}, Authentication: true}, ""},
		{"count above", `{` + action + `,"recurrence":{"frequency":"Day","count":11}}`, Limits{MaxJobOccurrence: 10, MaxRecurrence: Period{"Minute", 1}, Authentication: true}, "maxJobOccurrence"},
		{"count at", `{` + action + `,"recurrence":{"frequency":"Day","count":10}}`, Limits{MaxJobOccurrence: 10, MaxRecurrence: Period{"Minute", 1}, Authentication: true}, ""},
		{"oauth on Free", `{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET","authentication":{"type":"ActiveDirectoryOAuth","tenant":"t","audience":"a","clientId":"c","secret":"s"}}}}`, SkuLimits(SkuFree), "authentication"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := props(t, tc.js)
			rule, ps := Validate(p, created)
			if len(ps) > 0 {
				t.Fatal(ps)
			}
			v := CheckLimits(p, rule, tc.limits, now, 0)
			got := ""
			if v != nil {
				got = v.Limit
			}
			if got != tc.want {
				t.Fatalf("violation %+v, want %q", v, tc.want)
			}
		})
	}
}

func TestCollectionLimits(t *testing.T) {
	seven, two := 7, 2
	for _, tc := range []struct {
		js   string
		want Limits
	}{
		{`{}`, Limits{MaxJobCount: 50, MaxRecurrence: Period{"Minute", 1}, Authentication: true}},
		{`{"sku":{"name":"Free"}}`, Limits{MaxJobCount: 5, MaxRecurrence: Period{"Hour", 1}}},
		{`{"sku":{"name":"P10Premium"}}`, Limits{MaxJobCount: 50, MaxRecurrence: Period{"Minute", 1}, Authentication: true}},
		{`{"sku":{"name":"P20Premium"}}`, Limits{MaxJobCount: 1000, MaxRecurrence: Period{"Minute", 1}, Authentication: true}},
		{`{"sku":{"name":"Free"},"quota":{"maxJobCount":7,"maxJobOccurrence":2,"maxRecurrence":{"frequency":"Minute","interval":2}}}`,
			Limits{MaxJobCount: seven, MaxJobOccurrence: two, MaxRecurrence: Period{"Minute", 2}}},
	} {
		var p wire.JobCollectionProperties
		if err := wire.Decode([]byte(tc.js), &p); err != nil {
			t.Fatal(err)
		}
		if got := CollectionLimits(&p); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.js, got, tc.want)
		}
	}
}
