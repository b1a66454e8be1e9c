package dispatch

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

type metrics struct {
	lateness   prometheus.Histogram
	executions *prometheus.CounterVec
	taken      prometheus.Counter
	rescued    prometheus.Counter
	skipped    prometheus.Counter
}

// newMetrics makes an actor's metrics and registers its own: the leader's scheduler's
// scheduler_executions_rescued_total (leader), or an executor's attempts, with
// scheduler_executions_taken_total on a replica's (replica).
func newMetrics(reg prometheus.Registerer, leader, replica bool, backlog, running func() float64) (*metrics, error) {
	m := &metrics{
		lateness: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "scheduler_execution_lateness_seconds",
			Help:    "Time from an occurrence's scheduled time to the start of its first attempt.",
			Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300},
		}),
		executions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_executions_total",
			Help: "Finished executions by outcome: completed (main action succeeded), failed (main action failed, error action succeeded), faulted.",
		}, []string{"outcome"}),
		taken: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "scheduler_executions_taken_total",
			Help: "Executions this replica's executor took to run (replicas sharing PostgreSQL), rescued ones taken again included.",
		}),
		rescued: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "scheduler_executions_rescued_total",
			Help: "Executions re-queued by this replica while it led, because their owner's lease ran out (a replica died or lost the database).",
		}),
		skipped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "scheduler_occurrence_skips_total",
			Help: "Skipped history entries written by this process's scheduler: occurrences the overlap policy skipped, and runs of missed occurrences the misfire policy Skip skipped (one entry each).",
		}),
	}
	for _, o := range []string{outcomeCompleted, outcomeFailed, outcomeFaulted} {
		m.executions.WithLabelValues(o)
	}
	var cs []prometheus.Collector
	switch {
	case leader:
		cs = append(cs, m.rescued, m.skipped)
	default:
		cs = append(cs, m.lateness, m.executions,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "scheduler_due_backlog",
				Help: "Occurrences and retries that are due but whose attempt has not started.",
			}, backlog),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "scheduler_attempts_running",
				Help: "Attempts under way on this process.",
			}, running))
		if replica {
			cs = append(cs, m.taken)
		} else {
			cs = append(cs, m.skipped) // a single process's scheduler
		}
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if errors.As(err, &already) {
				return nil, fmt.Errorf("a dispatcher's metrics are already registered: %w", err)
			}
			return nil, err
		}
	}
	return m, nil
}

// Execution outcomes (label values of scheduler_executions_total, values of Outcome.Outcome).
const (
	outcomeCompleted = "completed"
	outcomeFailed    = "failed"
	outcomeFaulted   = "faulted"
)

// Exported names of the outcomes, for Config.OnOutcome's receivers.
const (
	OutcomeCompleted = outcomeCompleted // the main action succeeded
	OutcomeFailed    = outcomeFailed    // the main action failed, the error action succeeded
	OutcomeFaulted   = outcomeFaulted   // neither succeeded (or there was no error action)
)

// Outcome is a finished execution, as given to Config.OnOutcome.
type Outcome struct {
	JobID     int64
	Job       store.JobKey
	Tag       string    // the execution's tag (its history entries' executionTag)
	Outcome   string    // OutcomeCompleted, OutcomeFailed or OutcomeFaulted
	Missed    int       // occurrences coalesced into this execution (missed by more than the misfire threshold)
	Scheduled time.Time // the occurrence's scheduled time
	End       time.Time // the end of its last attempt
}
