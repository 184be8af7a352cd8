package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lembas/internal/auth"
	"lembas/internal/config"
	"lembas/internal/db"
	"lembas/internal/settings"
)

var cheap = auth.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

func testConfig(t *testing.T, dir string) config.Config {
	t.Helper()
	cfg, err := config.Load(func(string) (string, bool) { return "", false }, []string{"-addr", "127.0.0.1:0", "-data-dir", dir})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// start runs an App and returns its base URL and a stop function that
// waits for Serve to return.
func start(t *testing.T, cfg config.Config) (*App, string, func() error) {
	t.Helper()
	a, err := New(context.Background(), cfg, quiet(), Options{Version: "test", AuthParams: cheap})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := a.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	stop := func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(15 * time.Second):
			return errors.New("Serve did not return")
		}
	}
	return a, "http://" + ln.Addr().String(), stop
}

func TestServeAndShutDownInOrder(t *testing.T) {
	a, base, stop := start(t, testConfig(t, t.TempDir()))
	res, err := http.Get(base + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", res, err)
	}
	res.Body.Close()
	if err := stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	// The listener is closed and the database was closed last.
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("still accepting after shutdown")
	}
	if err := a.DB.Ping(context.Background()); err == nil {
		t.Fatal("database still open after shutdown")
	}
}

func TestSecretKeyGeneratedOnceAndKept(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	a, err := New(context.Background(), cfg, quiet(), Options{AuthParams: cheap})
	if err != nil {
		t.Fatal(err)
	}
	sealed := a.Box.Seal("sk-test")
	a.Close()
	b, err := New(context.Background(), cfg, quiet(), Options{AuthParams: cheap})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got, err := b.Box.Open(sealed); err != nil || got != "sk-test" {
		t.Fatalf("after restart the key changed: %q %v", got, err)
	}
}

func TestEnvironmentSeedsSignupOnFirstStartOnly(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	off := false
	cfg.AllowSignup = &off
	a, err := New(context.Background(), cfg, quiet(), Options{AuthParams: cheap})
	if err != nil {
		t.Fatal(err)
	}
	if a.Settings.General().AllowSignup || a.Settings.Source(settings.KeyAllowSignup) != settings.FromEnv {
		t.Fatal("environment did not seed sign-up")
	}
	a.Settings.SaveGeneral(context.Background(), settings.General{AllowSignup: true})
	a.Close()
	b, err := New(context.Background(), cfg, quiet(), Options{AuthParams: cheap})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !b.Settings.General().AllowSignup {
		t.Fatal("the environment overrode an administrator's choice on restart")
	}
}

func TestNewerDatabaseIsRefusedUntouched(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	a, err := New(context.Background(), cfg, quiet(), Options{AuthParams: cheap})
	if err != nil {
		t.Fatal(err)
	}
	a.DB.W.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (500, 'from the future', 0)`)
	a.Close()
	_, err = New(context.Background(), cfg, quiet(), Options{AuthParams: cheap})
	if err == nil || !strings.Contains(err.Error(), "newer version") {
		t.Fatalf("err = %v", err)
	}
	f, err := db.Inspect(context.Background(), filepath.Join(dir, "lembas.db"))
	if err != nil || f.SchemaVersion != 500 {
		t.Fatalf("the database was changed: %+v %v", f, err)
	}
}

func TestBadSecretKeyStopsStartupClearly(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.SecretKey = "not-a-key"
	_, err := New(context.Background(), cfg, quiet(), Options{AuthParams: cheap})
	if err == nil || !strings.Contains(err.Error(), "LEMBAS_SECRET_KEY") {
		t.Fatalf("err = %v", err)
	}
}
