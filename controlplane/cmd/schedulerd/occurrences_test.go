package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedJob is the example job of seeds/004, its // comments and trailing commas removed.
const seedJob = `{
    "startTime": "2012-08-04T00:00Z",
    "action":
    {
        "type": "http",
        "retryPolicy": { "retryType":"none" },
        "request":
        {
            "uri": "http://contoso.com/foo",
            "method": "PUT",
            "body": "Posting from a timer",
            "headers":
            {
                "Content-Type": "application/json"
            }
        },
       "errorAction":
       {
           "type": "http",
           "request":
           {
               "uri": "http://contoso.com/notifyError",
               "method": "POST"
           }
       }
    },
    "recurrence":
    {
        "frequency": "week",
        "interval": 1,
        "schedule":
        {
            "weekDays": ["monday", "wednesday", "friday"],
            "hours": [10, 22]
        },
        "count": 10,
        "endTime": "2012-11-04"
    },
    "state": "disabled",
    "status":
    {
        "lastExecutionTime": "2007-03-01T13:00:00Z",
        "nextExecutionTime": "2007-03-01T14:00:00Z ",
        "executionCount": 3,
                                            "failureCount": 0,
                                            "faultedCount": 0
    }
}`

const seedJobOut = `2012-08-06T10:00:00Z
2012-08-06T22:00:00Z
2012-08-08T10:00:00Z
2012-08-08T22:00:00Z
2012-08-10T10:00:00Z
2012-08-10T22:00:00Z
2012-08-13T10:00:00Z
2012-08-13T22:00:00Z
2012-08-15T10:00:00Z
2012-08-15T22:00:00Z
`

const httpAction = `"action":{"type":"Http","request":{"uri":"http://example.com/hook","method":"POST"}}`

// jitteredRecurrence is a jittered daily rule in Berlin with three excluded dates, two right
// after its first run (the API package's preview test has the same rule, job and starts).
const jitteredRecurrence = `"recurrence":{"frequency":"Day","timeZone":"Europe/Berlin","jitter":"PT5M",` +
	`"excludeDates":["2026-11-20","2026-11-21","2026-12-25"]}`

// jitteredWords is jitteredRecurrence from 2026-11-19 in words, as every preview says it.
const jitteredWords = "at 00:00 every day, up to 5 minutes later, except 3 dates, from 2026-11-19 00:00, Europe/Berlin"

// jitteredStarts are the starts of the first four runs of jitteredRecurrence from 2026-11-19 for
// the job sub-a/rg1/jc1/j1, as POST /preview/occurrences answers them and the dispatcher starts
// them (controlplane/api TestPreviewOfAStoredJobHonoursJitterAndExcludedDates).
var jitteredStarts = []string{"2026-11-19T00:02:52.15+01:00", "2026-11-22T00:03:18.794+01:00", "2026-11-23T00:01:49.063+01:00", "2026-11-24T00:04:27.849+01:00"}

func TestOccurrencesCommand(t *testing.T) {
	dir := t.TempDir()
	seedFile := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(seedFile, []byte(seedJob), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "seed job from a file: count 10 ends it",
			args:     []string{"occurrences", "--now", "2012-08-01T09:00:00Z", "--count", "100", seedFile},
			wantCode: 0, wantStdout: seedJobOut},
		{name: "seed job wrapped in a definition, from stdin",
			args:     []string{"occurrences", "--now", "2012-08-01T09:00:00Z", "-"},
			stdin:    `{"name":"seed","properties":` + seedJob + `}`,
			wantCode: 0, wantStdout: seedJobOut},
		{name: "seed job, a candidate exactly at now runs",
			args:     []string{"occurrences", "--now=2012-08-07T00:00:00+02:00", "--count=3", seedFile},
			wantCode: 0, wantStdout: "2012-08-06T22:00:00Z\n2012-08-08T10:00:00Z\n2012-08-08T22:00:00Z\n"},
		{name: "the startTime worked example",
			args:     []string{"occurrences", "--now", "2015-04-08T13:00:00Z", "--count", "3"},
			stdin:    `{"startTime":"2015-04-07T14:00:00Z",` + httpAction + `,"recurrence":{"frequency":"Day","interval":2}}`,
			wantCode: 0, wantStdout: "2015-04-09T14:00:00Z\n2015-04-11T14:00:00Z\n2015-04-13T14:00:00Z\n"},
		{name: "default count is 10",
			args:     []string{"occurrences", "--now", "2015-04-08T13:00:00Z"},
			stdin:    `{` + httpAction + `,"recurrence":{"frequency":"Minute","interval":15}}`,
			wantCode: 0, wantStdout: "2015-04-08T13:00:00Z\n2015-04-08T13:15:00Z\n2015-04-08T13:30:00Z\n2015-04-08T13:45:00Z\n2015-04-08T14:00:00Z\n" +
				"2015-04-08T14:15:00Z\n2015-04-08T14:30:00Z\n2015-04-08T14:45:00Z\n2015-04-08T15:00:00Z\n2015-04-08T15:15:00Z\n"},
		{name: "zone: printed in UTC",
			args:     []string{"occurrences", "--now", "2015-03-27T00:00:00Z", "--count", "3"},
			stdin:    `{"startTime":"2015-03-27T02:30:00",` + httpAction + `,"recurrence":{"frequency":"Day","timeZone":"Europe/Berlin"}}`,
			wantCode: 0, wantStdout: "2015-03-27T01:30:00Z\n2015-03-28T01:30:00Z\n2015-03-29T01:30:00Z\n"},
		{name: "zone: printed in the rule's zone with --zone",
			args:     []string{"occurrences", "--now", "2015-03-27T00:00:00Z", "--count", "3", "--zone"},
			stdin:    `{"startTime":"2015-03-27T02:30:00",` + httpAction + `,"recurrence":{"frequency":"Day","timeZone":"Europe/Berlin"}}`,
			wantCode: 0, wantStdout: "2015-03-27T02:30:00+01:00\n2015-03-28T02:30:00+01:00\n2015-03-29T03:30:00+02:00\n"},
		{name: "zone: startTime's offset with --zone, UTC without",
			args:     []string{"occurrences", "--now", "2026-11-23T00:00:00Z", "--count", "2", "--zone"},
			stdin:    `{"startTime":"2026-12-01T07:30:00-05:00","recurrence":{"frequency":"Day"}}`,
			wantCode: 0, wantStdout: "2026-12-01T07:30:00-05:00\n2026-12-02T07:30:00-05:00\n"},
		{name: "a bare recurrence, described, in its zone",
			args:     []string{"occurrences", "--now", "2026-11-23T00:00:00Z", "--count", "3", "--zone", "--describe"},
			stdin:    `{"frequency":"week","timeZone":"Europe/Berlin","schedule":{"weekDays":["monday","tuesday","wednesday","thursday","friday"],"hours":[9,17],"minutes":[0]}}`,
			wantCode: 0, wantStdout: "at 09:00 and 17:00, Monday to Friday, Europe/Berlin\n2026-11-23T01:00:00+01:00\n2026-11-23T09:00:00+01:00\n2026-11-23T17:00:00+01:00\n"},
		{name: "a schedule without action: startTime and recurrence are checked",
			args:     []string{"occurrences", "--now", "2026-11-23T00:00:00Z", "--count", "2", "--describe"},
			stdin:    `{"startTime":"2026-12-01T08:00:00Z","recurrence":{"frequency":"Minute","interval":15,"count":5}}`,
			wantCode: 0, wantStdout: "every 15 minutes, 5 times, from 2026-12-01 08:00\n2026-12-01T08:00:00Z\n2026-12-01T08:15:00Z\n"},
		{name: "a bare recurrence: problems relative to it",
			args:       []string{"occurrences", "--now", "2026-11-23T00:00:00Z"},
			stdin:      `{"frequency":"Week","schedule":{"monthDays":[3]},"colour":1}`,
			wantCode:   2,
			wantStderr: "colour: unknown field (allowed: frequency, interval, count, endTime, timeZone, schedule, jitter, excludeDates)\n"},
		{name: "a bare recurrence: rule problems relative to it",
			args:       []string{"occurrences", "--now", "2026-11-23T00:00:00Z"},
			stdin:      `{"frequency":"Week","schedule":{"monthDays":[3]}}`,
			wantCode:   2,
			wantStderr: "schedule.monthDays: allowed only with frequency Month, not Week\n"},
		{name: "no recurrence, startTime in the future, real clock",
			args:     []string{"occurrences"},
			stdin:    `{"startTime":"2999-01-01T00:00:00+01:00",` + httpAction + `}`,
			wantCode: 0, wantStdout: "2998-12-31T23:00:00Z\n"},
		{name: "no recurrence, startTime past: once, immediately",
			args:     []string{"occurrences", "--now", "2015-04-08T13:00:00Z"},
			stdin:    `{"startTime":"2015-04-01",` + httpAction + `}`,
			wantCode: 0, wantStdout: "2015-04-08T13:00:00Z\n"},
		{name: "nothing left to run",
			args:     []string{"occurrences", "--now", "2015-04-08T13:00:00Z"},
			stdin:    `{"startTime":"2015-04-01T10:00:00Z",` + httpAction + `,"recurrence":{"frequency":"Day","endTime":"2015-04-05T10:00:00Z"}}`,
			wantCode: 0},
		{name: "wrong JSON types name their path",
			args:     []string{"occurrences", "--now", "2015-04-08T13:00:00Z"},
			stdin:    `{"properties":{"recurrence":{"frequency":"Month","interval":"2","schedule":{"monthDays":[1,2,"3",32]}},"colour":1}}`,
			wantCode: 2,
			wantStderr: "properties.colour: unknown field (allowed: startTime, action, recurrence, state, status, overlap, misfire, resumeAt, note)\n" +
				"properties.recurrence.interval: expected an integer, got a string\n" +
				"properties.recurrence.schedule.monthDays[2]: expected an integer, got a string\n"},
		{name: "invalid rules: every problem, one per line",
			args:     []string{"occurrences", "--now", "2015-04-08T13:00:00Z"},
			stdin:    `{"properties":{` + httpAction + `,"recurrence":{"frequency":"Month","interval":19,"schedule":{"monthDays":[1,2,32],"weekDays":["monday"]}}}}`,
			wantCode: 2,
			wantStderr: "properties.recurrence.interval: 19 is outside 1..18 for frequency Month\n" +
				"properties.recurrence.schedule.weekDays: allowed only with frequency Week, not Month\n" +
				"properties.recurrence.schedule.monthDays[2]: 32 is outside -31..-1, 1..31\n"},
		{name: "bare properties: paths relative to them",
			args:       []string{"occurrences", "--now", "2015-04-08T13:00:00Z"},
			stdin:      `{"startTime":"2015-02-10T08:00:00Z",` + httpAction + `,"recurrence":{"frequency":"Month","interval":12,"schedule":{"monthDays":[30]}}}`,
			wantCode:   2,
			wantStderr: "recurrence.schedule: the rule can never fire: no month it reaches from 2015-02-10T08:00:00Z (every 12) has a matching day and time\n"},
		{name: "a job as the API returns it, its secrets left out (never returned)",
			args: []string{"occurrences", "--now", "2015-04-08T13:00:00Z", "--count", "2"},
			stdin: `{"id":"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/j","name":"j","properties":{` +
				`"startTime":"2015-04-07T14:00:00Z","action":{"type":"Https","request":{"uri":"https://example.com/hook","method":"POST",` +
				`"authentication":{"type":"Basic","username":"u"}},"errorAction":{"type":"StorageQueue","queueMessage":` +
				`{"storageAccount":"acct","queueName":"errors","message":"m"}}},"recurrence":{"frequency":"Day","interval":2}}}`,
			wantCode: 0, wantStdout: "2015-04-09T14:00:00Z\n2015-04-11T14:00:00Z\n"},
		{name: "a secret that is set is still checked",
			args: []string{"occurrences", "--now", "2015-04-08T13:00:00Z"},
			stdin: `{"startTime":"2015-04-07T14:00:00Z","action":{"type":"StorageQueue","queueMessage":` +
				`{"storageAccount":"acct","queueName":"jobs","sasToken":"nosig","message":"m"}},"recurrence":{"frequency":"Day"}}`,
			wantCode:   2,
			wantStderr: "action.queueMessage.sasToken: is not a shared access signature (a query string with sig=...)\n"},
		{name: "a jittered job as the API returns it (its id): each run's start, excluded dates left out",
			args: []string{"occurrences", "--now", "2026-11-18T12:00:30Z", "--count", "4", "--zone", "--describe"},
			stdin: `{"id":"/subscriptions/sub-a/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1/jobs/j1","name":"j1",` +
				`"properties":{"startTime":"2026-11-19T00:00:00",` + httpAction + `,` + jitteredRecurrence + `}}`,
			wantCode: 0, wantStdout: jitteredWords + "\n" + strings.Join(jitteredStarts, "\n") + "\n"},
		{name: "the same job's id in another case: the same starts, in UTC",
			args: []string{"occurrences", "--now", "2026-11-18T12:00:30Z", "--count", "1"},
			stdin: `{"id":"/SUBSCRIPTIONS/SUB-A/resourcegroups/RG1/providers/Microsoft.Scheduler/jobCollections/JC1/jobs/J1",` +
				`"properties":{"startTime":"2026-11-19T00:00:00",` + jitteredRecurrence + `}}`,
			wantCode: 0, wantStdout: "2026-11-18T23:02:52.15Z\n"},
		{name: "a jittered rule without a job: the scheduled times, the window on stderr",
			args:     []string{"occurrences", "--now", "2026-11-18T12:00:30Z", "--count", "4", "--zone", "--describe"},
			stdin:    `{"startTime":"2026-11-19T00:00:00",` + httpAction + `,` + jitteredRecurrence + `}`,
			wantCode: 0, wantStdout: jitteredWords + "\n2026-11-19T00:00:00+01:00\n2026-11-22T00:00:00+01:00\n2026-11-23T00:00:00+01:00\n2026-11-24T00:00:00+01:00\n",
			wantStderr: "schedulerd occurrences: the scheduled times: each run starts up to PT5M later (recurrence.jitter), " +
				"at an offset derived from the job's id; give the job as the API returns it, with its id, for its starts\n"},
		{name: "an id without jitter: the scheduled times, nothing said",
			args:     []string{"occurrences", "--now", "2026-11-18T12:00:30Z", "--count", "2"},
			stdin:    `{"id":"/subscriptions/sub-a/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1/jobs/j1","properties":{"startTime":"2026-11-19T00:00:00Z","recurrence":{"frequency":"Day"}}}`,
			wantCode: 0, wantStdout: "2026-11-19T00:00:00Z\n2026-11-20T00:00:00Z\n"},
		{name: "an id that is not a job's",
			args:       []string{"occurrences", "--now", "2026-11-18T12:00:30Z"},
			stdin:      `{"id":"/subscriptions/sub-a/jobs/j1","properties":{` + jitteredRecurrence + `}}`,
			wantCode:   2,
			wantStderr: `id: "/subscriptions/sub-a/jobs/j1" is not a job's id /subscriptions/{subscription}/resourceGroups/{resourceGroup}/providers/Microsoft.Scheduler/jobCollections/{collection}/jobs/{job}` + "\n"},
		{name: "malformed JSON",
			args:       []string{"occurrences"},
			stdin:      "{\n  \"startTime\": \"2015-04-01\",\n}",
			wantCode:   2,
			wantStderr: "invalid JSON at line 3, column 1 (byte 31): invalid character '}' looking for beginning of object key string\n"},
		{name: "count 0", args: []string{"occurrences", "--count", "0", seedFile}, wantCode: 2,
			wantStderr: "schedulerd occurrences: --count 0 is outside 1..10000\n"},
		{name: "count 10001", args: []string{"occurrences", "--count", "10001", seedFile}, wantCode: 2,
			wantStderr: "schedulerd occurrences: --count 10001 is outside 1..10000\n"},
		{name: "bad now", args: []string{"occurrences", "--now", "yesterday", seedFile}, wantCode: 2,
			wantStderr: "schedulerd occurrences: --now \"yesterday\" is not an RFC 3339 date-time such as 2015-04-08T13:00:00Z\n"},
		{name: "two files", args: []string{"occurrences", seedFile, seedFile}, wantCode: 2,
			wantStderr: "schedulerd occurrences: one job file at most, got 2 arguments\n"},
		{name: "missing file", args: []string{"occurrences", filepath.Join(dir, "nope.json")}, wantCode: 1,
			wantStderr: "schedulerd occurrences: read job: open " + filepath.Join(dir, "nope.json") + ": no such file or directory\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), c.args, strings.NewReader(c.stdin), &stdout, &stderr)
			if code != c.wantCode || stdout.String() != c.wantStdout || stderr.String() != c.wantStderr {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s",
					code, c.wantCode, stdout.String(), c.wantStdout, stderr.String(), c.wantStderr)
			}
		})
	}
}

func TestOccurrencesCommandUnknownFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"occurrences", "--every", "1"}, strings.NewReader(""), &stdout, &stderr)
	if code != 2 || stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), "flag provided but not defined: -every\nusage: schedulerd occurrences [--now RFC3339] [--count N] [--zone] [--describe] [FILE|-]\n") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

func TestOccurrencesCommandMaximum(t *testing.T) {
	var stdout, stderr bytes.Buffer
	job := `{"startTime":"2015-01-01T00:00:00Z",` + httpAction + `,"recurrence":{"frequency":"Minute"}}`
	code := run(context.Background(), []string{"occurrences", "--now", "2015-01-01T00:00:00Z", "--count", "10000"}, strings.NewReader(job), &stdout, &stderr)
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if code != 0 || stderr.Len() != 0 || len(lines) != 10000 || lines[0] != "2015-01-01T00:00:00Z" || lines[9999] != "2015-01-07T22:39:00Z" {
		t.Errorf("exit %d, %d lines (%q ... %q), stderr %q", code, len(lines), lines[0], lines[len(lines)-1], stderr.String())
	}
}
