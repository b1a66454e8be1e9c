package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// telemetryConfig is what `schedulerd serve` is told about its metrics.
type telemetryConfig struct {
	// metricsToken reads GET /metrics only ("": none; the admin token always can).
	metricsToken string
	// perJob exports the per-job series (subscription, collection, job labels).
	perJob bool
}

// telemetryFlags declares the metrics flags on fs; the returned function reads them (after
// fs.Parse) into c.
func telemetryFlags(fs *flag.FlagSet, env func(name, def string) string, getenv func(string) string, c *telemetryConfig) func() error {
	tokenFile := fs.String("metrics-token-file", env("SCHEDULERD_METRICS_TOKEN_FILE", ""),
		"file holding a token that reads GET /metrics and nothing else (else SCHEDULERD_METRICS_TOKEN; none: only the admin token reads /metrics) [SCHEDULERD_METRICS_TOKEN_FILE]")
	perJob := fs.String("metrics-per-job", env("SCHEDULERD_METRICS_PER_JOB", "true"),
		"export per-job series (labels subscription, collection, job: four series per job that ran since the start); false to turn them off on large stores [SCHEDULERD_METRICS_PER_JOB]")
	return func() error {
		v, err := strconv.ParseBool(*perJob)
		if err != nil {
			return fmt.Errorf("--metrics-per-job %q: want true or false", *perJob)
		}
		c.perJob = v
		c.metricsToken = strings.TrimSpace(getenv("SCHEDULERD_METRICS_TOKEN"))
		if *tokenFile != "" {
			b, err := readTokenFile("--metrics-token-file", *tokenFile)
			if err != nil {
				return err
			}
			if c.metricsToken = strings.TrimSpace(string(b)); c.metricsToken == "" {
				return fmt.Errorf("--metrics-token-file %s is empty", *tokenFile)
			}
		}
		if c.metricsToken != "" {
			return checkTokenLength("metrics token (--metrics-token-file or SCHEDULERD_METRICS_TOKEN)", c.metricsToken)
		}
		return nil
	}
}
