package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"lembas/internal/app"
	"lembas/internal/auth"
	"lembas/internal/catalog"
	"lembas/internal/config"
	"lembas/internal/secret"
)

// cheapParams keep the one sign-in fast; the parameters travel in the
// hash, so every code path is the production one.
var cheapParams = auth.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

const (
	loadUser     = "load"
	loadPassword = "load test password"
	loadModel    = "load-model"
)

// instance is a real LLeMbas, built by internal/app as `lembas serve`
// builds it, on a temporary data directory and a loopback port.
type instance struct {
	base    string // http://127.0.0.1:port
	modelID string
	dir     string
	log     *countingLog
	stop    func() error
}

func startInstance(upstreamURL string) (*instance, error) {
	dir, err := os.MkdirTemp("", "lembas-load-")
	if err != nil {
		return nil, err
	}
	// A key of its own, so the first start does not generate one and
	// warn about backing it up.
	key := secret.NewKey()
	env := func(name string) (string, bool) {
		if name == "LEMBAS_SECRET_KEY" {
			return key, true
		}
		return "", false
	}
	cfg, err := config.Load(env, []string{"-addr", "127.0.0.1:0", "-data-dir", dir})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	logs := &countingLog{}
	ctx := context.Background()
	a, err := app.New(ctx, cfg, slog.New(logs), app.Options{Version: "load", AuthParams: cheapParams})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	fail := func(err error) (*instance, error) {
		a.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	if _, err := a.Auth.Register(ctx, loadUser, loadPassword, true); err != nil {
		return fail(fmt.Errorf("register: %w", err))
	}
	conn, err := a.Catalog.CreateConnection(ctx, catalog.ConnectionForm{Name: "fake", BaseURL: upstreamURL, Timeout: "60"})
	if err != nil {
		return fail(fmt.Errorf("connection: %w", err))
	}
	if res, err := a.Catalog.Discover(ctx, conn.ID); err != nil || res.Err != nil {
		return fail(fmt.Errorf("discover: %v %v", err, res.Err))
	}
	models, _, err := a.Catalog.ListModels(ctx, catalog.Filter{ConnectionID: conn.ID})
	if err != nil || len(models) == 0 {
		return fail(fmt.Errorf("no models discovered: %v", err))
	}
	ln, err := a.Listen()
	if err != nil {
		return fail(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(runCtx, ln) }()
	in := &instance{base: "http://" + ln.Addr().String(), modelID: models[0].ID, dir: dir, log: logs}
	in.stop = func() error {
		cancel()
		var err error
		select {
		case err = <-done:
		case <-time.After(app.ShutdownGrace + 5*time.Second):
			err = errors.New("the server did not stop in time")
		}
		os.RemoveAll(dir)
		return err
	}
	return in, nil
}

// countingLog is LLeMbas's logger during a run: request lines are
// dropped, warnings and errors are counted and the first few kept for the
// report.
type countingLog struct {
	mu       sync.Mutex
	warnings int
	errors   int
	first    []string
}

func (l *countingLog) Enabled(_ context.Context, lvl slog.Level) bool { return lvl >= slog.LevelWarn }
func (l *countingLog) WithAttrs([]slog.Attr) slog.Handler             { return l }
func (l *countingLog) WithGroup(string) slog.Handler                  { return l }

func (l *countingLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Level >= slog.LevelError {
		l.errors++
	} else {
		l.warnings++
	}
	if len(l.first) < 5 {
		line := r.Level.String() + " " + r.Message
		r.Attrs(func(a slog.Attr) bool {
			line += " " + a.String()
			return true
		})
		l.first = append(l.first, line)
	}
	return nil
}

func (l *countingLog) counts() (warnings, errs int, first []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.warnings, l.errors, append([]string(nil), l.first...)
}
