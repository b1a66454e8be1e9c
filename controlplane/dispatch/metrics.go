package dispatch

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	lateness   prometheus.Histogram
	executions *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, backlog func() float64) (*metrics, error) {
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
	}
	for _, o := range []string{outcomeCompleted, outcomeFailed, outcomeFaulted} {
		m.executions.WithLabelValues(o)
	}
	gauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "scheduler_due_backlog",
		Help: "Occurrences and retries that are due but whose attempt has not started.",
	}, backlog)
	for _, c := range []prometheus.Collector{m.lateness, m.executions, gauge} {
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

// Execution outcomes (label values of scheduler_executions_total).
const (
	outcomeCompleted = "completed"
	outcomeFailed    = "failed"
	outcomeFaulted   = "faulted"
)
