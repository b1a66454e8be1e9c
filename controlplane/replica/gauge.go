package replica

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Gauges registers with reg the two gauges every daemon exports about its replica:
// scheduler_replica_info (labelled with id, always 1) and scheduler_leader, which it returns
// (1 while the replica leads, 0 elsewhere; 0 until set). A daemon on SQLite is the one replica
// there is and sets it to 1.
func Gauges(reg prometheus.Registerer, id string) (prometheus.Gauge, error) {
	leader := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "scheduler_leader", Help: "1 on the replica that leads (computes the schedule, claims occurrences, purges), 0 elsewhere.",
	})
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "scheduler_replica_info", Help: "This replica's id (label replica); always 1.",
		ConstLabels: prometheus.Labels{"replica": id},
	})
	info.Set(1)
	for _, c := range []prometheus.Collector{leader, info} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering the replica gauges: %w", err)
		}
	}
	return leader, nil
}
