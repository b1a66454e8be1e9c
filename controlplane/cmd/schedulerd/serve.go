package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.opentelemetry.io/otel/trace"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/api"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/replica"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/postgres"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/telemetry"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/ui"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// shutdownGrace bounds a graceful stop: stop accepting, finish in-flight requests and attempts.
const shutdownGrace = 9 * time.Second

// serveConfig is the daemon's configuration: flags, else environment variables, else defaults.
type serveConfig struct {
	listen         string
	data           string
	tlsCert        string
	tlsKey         string
	logLevel       slog.Level
	adminToken     string
	tokens         map[string]string // subscription -> token
	secretKeyFile  string
	oauthAuthority string
	storageQueue   string // --storage-queue-endpoint
	otlpEndpoint   string // --otlp-endpoint ("": spans not exported)
	traceURL       string // --trace-url: the dashboard links trace ids there ("": shown, not linked)
	serviceBus     action.ServiceBusConfig
	misfire        time.Duration
	faultedAfter   int
	region         string
	workers        int
	pprofListen    string
	store          string        // "": SQLite in data; postgres://...: PostgreSQL, replicas
	replicaID      string        // "": replica.DefaultID()
	leaderTTL      time.Duration // the leadership's lease among replicas
	executionLease time.Duration // an execution's lease on the replica that took it
	publicURL      string
	// Overload limits: --target-concurrency (0: workers/4), --max-connections,
	// --max-in-flight, --max-in-flight-per-tenant (0: a quarter of max-in-flight), --body-timeout.
	targetConcurrency int
	maxConnections    int
	maxInFlight       int
	maxPerTenant      int
	bodyTimeout       time.Duration
	telemetry         telemetryConfig
}

func addToken(m map[string]string, v string) error {
	sub, tok, ok := strings.Cut(strings.TrimSpace(v), "=")
	if !ok || strings.TrimSpace(sub) == "" || strings.TrimSpace(tok) == "" {
		return errors.New("want SUBSCRIPTION=TOKEN")
	}
	m[strings.TrimSpace(sub)] = strings.TrimSpace(tok)
	return nil
}

// parseServe reads the flags of `schedulerd serve`; each falls back to its SCHEDULERD_*
// environment variable, then to its default. Flags win.
func parseServe(args []string, getenv func(string) string, stderr io.Writer) (serveConfig, error) {
	var c serveConfig
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	fs := flag.NewFlagSet("schedulerd serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.listen, "listen", env("SCHEDULERD_LISTEN", "127.0.0.1:8480"), "address to listen on (127.0.0.1:0: a free port, written to <data>/listen-address) [SCHEDULERD_LISTEN]")
	fs.StringVar(&c.data, "data", env("SCHEDULERD_DATA", "./data"), "data directory: scheduler.db, admin-token, secret.key [SCHEDULERD_DATA]")
	fs.StringVar(&c.tlsCert, "tls-cert", env("SCHEDULERD_TLS_CERT", ""), "serve HTTPS with this PEM certificate [SCHEDULERD_TLS_CERT]")
	fs.StringVar(&c.tlsKey, "tls-key", env("SCHEDULERD_TLS_KEY", ""), "and this PEM key [SCHEDULERD_TLS_KEY]")
	level := fs.String("log-level", env("SCHEDULERD_LOG_LEVEL", "info"), "debug, info, warn or error [SCHEDULERD_LOG_LEVEL]")
	adminFile := fs.String("admin-token-file", env("SCHEDULERD_ADMIN_TOKEN_FILE", ""), "file holding the token for every subscription (else SCHEDULERD_ADMIN_TOKEN, else generated into <data>/admin-token) [SCHEDULERD_ADMIN_TOKEN_FILE]")
	tokensFile := fs.String("tokens-file", env("SCHEDULERD_TOKENS_FILE", ""), "file of SUBSCRIPTION=TOKEN lines: tokens scoped to one subscription (else SCHEDULERD_TOKENS=sub1=tok1,sub2=tok2) [SCHEDULERD_TOKENS_FILE]")
	fs.StringVar(&c.secretKeyFile, "secret-key-file", env("SCHEDULERD_SECRET_KEY_FILE", ""), "AES-256 key sealing job secrets; default <data>/secret.key; back it up apart from the database [SCHEDULERD_SECRET_KEY_FILE]")
	fs.StringVar(&c.oauthAuthority, "oauth-authority", env("SCHEDULERD_OAUTH_AUTHORITY", "https://login.microsoftonline.com"), "where ActiveDirectoryOAuth actions get their tokens [SCHEDULERD_OAUTH_AUTHORITY]")
	fs.StringVar(&c.otlpEndpoint, "otlp-endpoint", env("SCHEDULERD_OTLP_ENDPOINT", ""), "OTLP/HTTP collector the attempts' spans are exported to (http://collector:4318); empty: not exported, attempts still carry traceparent [SCHEDULERD_OTLP_ENDPOINT]")
	fs.StringVar(&c.traceURL, "trace-url", env("SCHEDULERD_TRACE_URL", ""), "the dashboard links each history entry's trace id to this URL, {traceId} standing for its 32 hex digits (https://tempo.example/trace/{traceId}); empty: the id is shown, not linked [SCHEDULERD_TRACE_URL]")
	fs.StringVar(&c.storageQueue, "storage-queue-endpoint", env("SCHEDULERD_STORAGE_QUEUE_ENDPOINT", action.DefaultStorageQueueEndpoint), "queue service of a storage account, {account} standing for its name (Azurite: http://127.0.0.1:10001/{account}) [SCHEDULERD_STORAGE_QUEUE_ENDPOINT]")
	fs.StringVar(&c.serviceBus.Endpoint, "service-bus-endpoint", env("SCHEDULERD_SERVICE_BUS_ENDPOINT", action.DefaultServiceBusEndpoint), "AMQP 1.0 address of a Service Bus namespace, {namespace} standing for its name (RabbitMQ: amqp://127.0.0.1:5672) [SCHEDULERD_SERVICE_BUS_ENDPOINT]")
	fs.StringVar(&c.serviceBus.Auth, "service-bus-auth", env("SCHEDULERD_SERVICE_BUS_AUTH", action.ServiceBusAuthCBS), "cbs: a SAS token put on $cbs (Azure Service Bus); plain: SASL PLAIN with sasKeyName and sasKey (brokers without CBS, such as RabbitMQ) [SCHEDULERD_SERVICE_BUS_AUTH]")
	fs.StringVar(&c.serviceBus.QueueAddress, "service-bus-queue-address", env("SCHEDULERD_SERVICE_BUS_QUEUE_ADDRESS", action.DefaultServiceBusQueueAddress), "AMQP target address of a queue, {queue} standing for its name (RabbitMQ 3.x: /amq/queue/{queue}; 4.x: /queues/{queue}) [SCHEDULERD_SERVICE_BUS_QUEUE_ADDRESS]")
	fs.StringVar(&c.serviceBus.TopicAddress, "service-bus-topic-address", env("SCHEDULERD_SERVICE_BUS_TOPIC_ADDRESS", action.DefaultServiceBusTopicAddress), "AMQP target address of a topic, {topic} standing for its path (RabbitMQ 3.x: /exchange/{topic}; 4.x: /exchanges/{topic}) [SCHEDULERD_SERVICE_BUS_TOPIC_ADDRESS]")
	misfire := fs.String("misfire-threshold", env("SCHEDULERD_MISFIRE_THRESHOLD", "60s"), "occurrences missed by more than this are coalesced [SCHEDULERD_MISFIRE_THRESHOLD]")
	faulted := fs.String("faulted-after", env("SCHEDULERD_FAULTED_AFTER", "10"), "consecutive faulted occurrences that make a job Faulted [SCHEDULERD_FAULTED_AFTER]")
	fs.StringVar(&c.region, "region", env("SCHEDULERD_REGION", "local"), "value of x-ms-scheduler-execution-region [SCHEDULERD_REGION]")
	workers := fs.String("workers", env("SCHEDULERD_WORKERS", "256"), "concurrent action attempts [SCHEDULERD_WORKERS]")
	targetConc := fs.String("target-concurrency", env("SCHEDULERD_TARGET_CONCURRENCY", "0"), "attempts under way to one target (scheme, host, port) at most; 0: a quarter of --workers [SCHEDULERD_TARGET_CONCURRENCY]")
	maxConns := fs.String("max-connections", env("SCHEDULERD_MAX_CONNECTIONS", "1024"), "open API connections at most; more wait in the kernel's backlog [SCHEDULERD_MAX_CONNECTIONS]")
	maxInFlight := fs.String("max-in-flight", env("SCHEDULERD_MAX_IN_FLIGHT", "256"), "API requests answered at once at most; more get 503 [SCHEDULERD_MAX_IN_FLIGHT]")
	maxPerTenant := fs.String("max-in-flight-per-tenant", env("SCHEDULERD_MAX_IN_FLIGHT_PER_TENANT", "0"), "API requests of one subscription answered at once at most; 0: a quarter of --max-in-flight [SCHEDULERD_MAX_IN_FLIGHT_PER_TENANT]")
	bodyTimeout := fs.String("body-timeout", env("SCHEDULERD_BODY_TIMEOUT", "10s"), "how long a request body may take to arrive (408 after) [SCHEDULERD_BODY_TIMEOUT]")
	fs.StringVar(&c.pprofListen, "pprof-listen", env("SCHEDULERD_PPROF_LISTEN", ""), "serve Go's /debug/pprof profiles on this address, apart from the API (off when empty; keep it on loopback) [SCHEDULERD_PPROF_LISTEN]")
	fs.StringVar(&c.store, "store", env("SCHEDULERD_STORE", ""), "postgres://user@host/db?...: keep everything in PostgreSQL, shared by every replica given the same URL; empty: SQLite in <data>/scheduler.db [SCHEDULERD_STORE]")
	fs.StringVar(&c.replicaID, "replica-id", env("SCHEDULERD_REPLICA_ID", ""), "this replica's id among replicas (default: hostname-pid-random; unique per live process) [SCHEDULERD_REPLICA_ID]")
	leaderTTL := fs.String("leader-ttl", env("SCHEDULERD_LEADER_TTL", replica.DefaultTTL.String()), "how long a leader's lease lasts without renewal: a dead leader is replaced within about this long [SCHEDULERD_LEADER_TTL]")
	execLease := fs.String("execution-lease", env("SCHEDULERD_EXECUTION_LEASE", dispatch.DefaultLease.String()), "how long an execution stays the replica's that took it without renewal (renewed when it ends within two thirds of it, looked at every sixth): a dead replica's attempts run again elsewhere, with their execution tags, about this long after it died [SCHEDULERD_EXECUTION_LEASE]")
	fs.StringVar(&c.publicURL, "public-url", env("SCHEDULERD_PUBLIC_URL", ""), "URL clients reach the API at (behind a proxy or on a wildcard address), used in nextLink; default: the address the connection arrived on, never the Host header [SCHEDULERD_PUBLIC_URL]")
	readTelemetry := telemetryFlags(fs, env, getenv, &c.telemetry)
	if err := refuseSecretArgs(args); err != nil {
		return c, err
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := c.logLevel.UnmarshalText([]byte(*level)); err != nil {
		return c, fmt.Errorf("--log-level %q: want debug, info, warn or error", *level)
	}
	var err error
	if err := ui.CheckTraceURL(c.traceURL); err != nil {
		return c, fmt.Errorf("--trace-url: %w", err)
	}
	if c.misfire, err = time.ParseDuration(*misfire); err != nil || c.misfire <= 0 {
		return c, fmt.Errorf("--misfire-threshold %q: want a positive duration such as 60s", *misfire)
	}
	if c.faultedAfter, err = strconv.Atoi(*faulted); err != nil || c.faultedAfter < 1 {
		return c, fmt.Errorf("--faulted-after %q: want a positive integer", *faulted)
	}
	if c.workers, err = strconv.Atoi(*workers); err != nil || c.workers < 1 {
		return c, fmt.Errorf("--workers %q: want a positive integer", *workers)
	}
	for _, n := range []struct {
		flag     string
		v        string
		to       *int
		positive bool
	}{
		{"--target-concurrency", *targetConc, &c.targetConcurrency, false},
		{"--max-connections", *maxConns, &c.maxConnections, true},
		{"--max-in-flight", *maxInFlight, &c.maxInFlight, true},
		{"--max-in-flight-per-tenant", *maxPerTenant, &c.maxPerTenant, false},
	} {
		v, err := strconv.Atoi(n.v)
		if err != nil || v < 0 || (n.positive && v == 0) {
			if n.positive {
				return c, fmt.Errorf("%s %q: want a positive integer", n.flag, n.v)
			}
			return c, fmt.Errorf("%s %q: want a positive integer, or 0 for the default", n.flag, n.v)
		}
		*n.to = v
	}
	if c.bodyTimeout, err = time.ParseDuration(*bodyTimeout); err != nil || c.bodyTimeout <= 0 {
		return c, fmt.Errorf("--body-timeout %q: want a positive duration such as 10s", *bodyTimeout)
	}
	if c.leaderTTL, err = time.ParseDuration(*leaderTTL); err != nil || c.leaderTTL < 300*time.Millisecond {
		return c, fmt.Errorf("--leader-ttl %q: want a duration of at least 300ms such as 3s", *leaderTTL)
	}
	if c.executionLease, err = time.ParseDuration(*execLease); err != nil || c.executionLease < 300*time.Millisecond {
		return c, fmt.Errorf("--execution-lease %q: want a duration of at least 300ms such as 5s", *execLease)
	}
	if c.store != "" && !postgres.IsURL(c.store) {
		return c, errors.New("--store: want a postgres:// or postgresql:// URL (or nothing: SQLite in --data)")
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return c, errors.New("--tls-cert and --tls-key go together")
	}
	c.adminToken = getenv("SCHEDULERD_ADMIN_TOKEN")
	if *adminFile != "" {
		b, err := readTokenFile("--admin-token-file", *adminFile)
		if err != nil {
			return c, err
		}
		if c.adminToken = strings.TrimSpace(string(b)); c.adminToken == "" {
			return c, fmt.Errorf("--admin-token-file %s is empty", *adminFile)
		}
	}
	c.tokens = map[string]string{}
	if *tokensFile != "" {
		b, err := readTokenFile("--tokens-file", *tokensFile)
		if err != nil {
			return c, err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if err := addToken(c.tokens, line); err != nil {
				return c, fmt.Errorf("--tokens-file %s line %d: %w", *tokensFile, i+1, err)
			}
		}
	} else if v := getenv("SCHEDULERD_TOKENS"); v != "" {
		for _, item := range strings.Split(v, ",") {
			if strings.TrimSpace(item) == "" {
				continue
			}
			if err := addToken(c.tokens, item); err != nil {
				return c, fmt.Errorf("SCHEDULERD_TOKENS: %w", err)
			}
		}
	}
	if c.adminToken != "" {
		if err := checkTokenLength("admin token (--admin-token-file or SCHEDULERD_ADMIN_TOKEN)", c.adminToken); err != nil {
			return c, err
		}
	}
	for sub, tok := range c.tokens {
		if err := checkTokenLength("token of subscription "+sub+" (--tokens-file or SCHEDULERD_TOKENS)", tok); err != nil {
			return c, err
		}
	}
	if err := readTelemetry(); err != nil {
		return c, err
	}
	if c.secretKeyFile == "" {
		c.secretKeyFile = filepath.Join(c.data, "secret.key")
	}
	if err := action.CheckEndpoint(c.storageQueue, "{account}"); err != nil {
		return c, fmt.Errorf("--storage-queue-endpoint: %w", err)
	}
	if err := c.serviceBus.Check(); err != nil {
		return c, fmt.Errorf("--service-bus-*: %w", err)
	}
	return c, nil
}

// refuseSecretArgs refuses the flags that would put a token on the command line, where every
// local user sees it (ps, /proc/PID/cmdline) and shell histories keep it. The error does not
// repeat the value.
func refuseSecretArgs(args []string) error {
	for _, a := range args {
		if a == "--" {
			return nil
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			continue
		}
		switch name {
		case "admin-token":
			return errors.New("--admin-token is not accepted: a token on the command line is visible to every local user (ps); " +
				"use --admin-token-file or SCHEDULERD_ADMIN_TOKEN")
		case "metrics-token":
			return errors.New("--metrics-token is not accepted: a token on the command line is visible to every local user (ps); " +
				"use --metrics-token-file or SCHEDULERD_METRICS_TOKEN")
		case "token":
			return errors.New("--token is not accepted: a token on the command line is visible to every local user (ps); " +
				"use --tokens-file or SCHEDULERD_TOKENS")
		}
	}
	return nil
}

func runServe(ctx context.Context, args []string, _ io.Writer, stderr io.Writer) int {
	cfg, err := parseServe(args, os.Getenv, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "schedulerd serve: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	if err := serve(ctx, &cfg, log); err != nil {
		log.Error("schedulerd stopped", "error", err.Error())
		return 1
	}
	return 0
}

// serve runs the daemon until ctx is cancelled, then stops gracefully. It drops the tokens from
// cfg once hashed: only their SHA-256 hashes stay in memory.
func serve(ctx context.Context, cfg *serveConfig, log *slog.Logger) error {
	if err := privateDir(cfg.data); err != nil {
		return err
	}
	lock, err := lockDir(cfg.data)
	if err != nil {
		return err
	}
	defer lock.release()
	var tlsConfig *tls.Config
	if cfg.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.tlsCert, cfg.tlsKey)
		if err != nil {
			return fmt.Errorf("tls: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	admin, err := adminToken(cfg, log)
	if err != nil {
		return err
	}
	tokens, err := api.NewTokens(admin, cfg.tokens)
	if err != nil {
		return fmt.Errorf("tokens: %w", err)
	}
	if cfg.telemetry.metricsToken != "" {
		if tokens, err = tokens.WithMetricsToken(cfg.telemetry.metricsToken); err != nil {
			return fmt.Errorf("tokens: %w", err)
		}
	}
	cfg.adminToken, cfg.tokens, cfg.telemetry.metricsToken = "", nil, ""
	dbPath := filepath.Join(cfg.data, "scheduler.db")
	var st store.Driver
	if cfg.store != "" {
		dbPath = "postgres"
		st, err = postgres.Open(ctx, cfg.store)
	} else {
		st, err = sqlite.Open(ctx, dbPath)
	}
	if err != nil {
		return err
	}
	defer func() {
		if err := st.Close(); err != nil {
			log.Error("closing the store", "error", err.Error())
		}
	}()
	box, err := secret.Startup(ctx, st, cfg.secretKeyFile, log)
	if err != nil {
		return err
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildInfoMetric())
	tel, err := telemetry.New(telemetry.Config{Store: st, Logger: log.With("component", "telemetry"), PerJob: cfg.telemetry.perJob})
	if err != nil {
		return err
	}
	if err := tel.Register(reg); err != nil {
		return err
	}
	var tracer trace.Tracer
	if cfg.otlpEndpoint != "" {
		tr, err := telemetry.NewTracing(telemetry.TracingConfig{Endpoint: cfg.otlpEndpoint, Registerer: reg})
		if err != nil {
			return fmt.Errorf("--otlp-endpoint: %w", err)
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = tr.Shutdown(sctx)
		}()
		tracer = tr.Tracer()
	}
	dispatchConfig := dispatch.Config{
		Tracer:               tracer,
		Store:                st,
		Clock:                clock.Real{},
		Secrets:              box,
		Logger:               log.With("component", "dispatch"),
		Registerer:           reg,
		OAuthAuthority:       cfg.oauthAuthority,
		StorageQueueEndpoint: cfg.storageQueue,
		ServiceBus:           cfg.serviceBus,
		MisfireThreshold:     cfg.misfire,
		FaultedAfter:         cfg.faultedAfter,
		Workers:              cfg.workers,
		TargetConcurrency:    cfg.targetConcurrency,
		Region:               cfg.region,
		OnOutcome:            tel.Observe,
	}
	var (
		disp      api.Dispatcher
		runDisp   func(context.Context) error
		gatherer  prometheus.Gatherer = reg
		uiReplica ui.Replica          // nil: a single node (the dashboard's Health says so)
	)
	if cfg.store != "" {
		// Replicas: the leader schedules and claims, one scheduler per term; every replica
		// executes (see package replica).
		dispatchConfig.Lease = cfg.executionLease
		rep, err := replica.New(replica.Config{
			Store: st, ID: cfg.replicaID, TTL: cfg.leaderTTL, Logger: log.With("component", "replica"), Registerer: reg,
			Dispatch: dispatchConfig,
		})
		if err != nil {
			return err
		}
		log = log.With("replica", rep.ID())
		disp, runDisp, gatherer = rep, rep.Run, prometheus.Gatherers{reg, rep}
		uiReplica = rep
	} else {
		d, err := dispatch.New(dispatchConfig)
		if err != nil {
			return fmt.Errorf("dispatcher: %w", err)
		}
		// One process on its SQLite file is the only replica there is, and leads.
		leader, err := replica.Gauges(reg, "sqlite")
		if err != nil {
			return err
		}
		leader.Set(1)
		disp, runDisp = d, d.Run
	}
	handler, err := api.New(api.Config{
		Store: st, Dispatcher: disp, Secrets: box, Clock: clock.Real{}, Logger: log.With("component", "api"),
		Tokens: tokens, Registerer: reg, Gatherer: gatherer, Metrics: tel.Handler(gatherer), PublicURL: cfg.publicURL,
		MaxInFlight: cfg.maxInFlight, MaxInFlightPerTenant: cfg.maxPerTenant, BodyTimeout: cfg.bodyTimeout,
	})
	if err != nil {
		return err
	}
	dash, err := ui.New(ui.Config{
		Store: st, API: handler, Tokens: tokens, Dispatcher: disp, Gatherer: gatherer, Clock: clock.Real{},
		Logger: log.With("component", "ui"), TLS: tlsConfig != nil, Replica: uiReplica, Telemetry: tel,
		MisfireThreshold: cfg.misfire, TraceURL: cfg.traceURL,
	})
	if err != nil {
		return err
	}

	tcp, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	ln := newLimitListener(tcp, cfg.maxConnections)
	addr := ln.Addr().String()
	if err := writeFileAtomic(filepath.Join(cfg.data, "listen-address"), []byte(addr+"\n"), 0o644); err != nil {
		_ = ln.Close()
		return err
	}
	srv := &http.Server{
		Handler:           withDashboard(handler, dash),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		TLSConfig:         tlsConfig,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	scheme := "http"
	if cfg.tlsCert != "" {
		scheme = "https"
	}
	warnPlainHTTP(log, ln.Addr(), tlsConfig != nil)
	log.Info("schedulerd listening", "address", addr, "url", scheme+"://"+addr, "data", cfg.data, "database", dbPath)

	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	if cfg.pprofListen != "" {
		_, stopPprof, err := servePprof(cfg.pprofListen, log)
		if err != nil {
			return err
		}
		defer stopPprof()
	}
	dispDone := make(chan error, 1)
	go func() { dispDone <- runDisp(runCtx) }()
	go dash.Run(runCtx)
	go tel.Run(runCtx)
	srvDone := make(chan error, 1)
	go func() {
		if tlsConfig != nil {
			srvDone <- srv.ServeTLS(ln, "", "")
		} else {
			srvDone <- srv.Serve(ln)
		}
	}()

	var runErr error
	select {
	case <-ctx.Done():
		log.Info("stopping: finishing in-flight requests and attempts")
	case err := <-srvDone:
		runErr = fmt.Errorf("http server: %w", err)
	case err := <-dispDone:
		dispDone <- err
		runErr = fmt.Errorf("dispatcher stopped: %w", err)
	}
	stopRun()
	deadline, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(deadline); err != nil {
		log.Warn("http shutdown", "error", err.Error())
	}
	select {
	case err := <-dispDone:
		if err != nil && !errors.Is(err, context.Canceled) && runErr == nil {
			runErr = fmt.Errorf("dispatcher: %w", err)
		}
	case <-deadline.Done():
		log.Warn("the dispatcher did not stop in time")
	}
	if runErr == nil {
		log.Info("schedulerd stopped")
	}
	return runErr
}

// withDashboard serves the dashboard at /ui/ and the API everywhere else (the API's own paths are
// left exactly as they are: no ServeMux cleaning or redirects).
func withDashboard(apiHandler, dash http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ui" || strings.HasPrefix(r.URL.Path, ui.Prefix) {
			dash.ServeHTTP(w, r)
			return
		}
		apiHandler.ServeHTTP(w, r)
	})
}
