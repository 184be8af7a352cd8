package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath is Debian's Chromium binary itself; /usr/bin/chromium is a
// wrapper script that chromedp cannot drive through its pipe.
const chromiumPath = "/usr/lib/chromium/chromium"

// browserStartTimeout bounds the cold start; it takes under a second here.
const browserStartTimeout = 30 * time.Second

// The one browser of this test binary. TestMain sets these before any test
// runs and nothing changes them afterwards; tests only read them.
var (
	browserCtx context.Context // a chromedp context that owns the browser
	browserErr error           // why there is no browser
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

// runTests starts Chromium, runs the tests and stops Chromium again. When
// Chromium cannot start, the tests still run so each one fails with the
// reason (see openTab): a missing browser must never look like a pass.
func runTests(m *testing.M) int {
	ctx, stop, err := startBrowser()
	if err != nil {
		browserErr = err
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return m.Run()
	}
	defer stop()
	browserCtx = ctx
	return m.Run()
}

// startBrowser starts one headless Chromium with a fresh profile and
// returns a context to open tabs from, and the function that stops it.
func startBrowser() (context.Context, func(), error) {
	if _, err := os.Stat(chromiumPath); err != nil {
		return nil, nil, fmt.Errorf("Chromium is not installed (%w). "+
			"Run the README's test command, scripts/test.sh: it installs Debian's chromium package first", err)
	}
	profile, err := os.MkdirTemp("", "lembas-e2e-chromium-")
	if err != nil {
		return nil, nil, fmt.Errorf("profile directory for Chromium: %w", err)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		// Containers often have a tiny /dev/shm, and Chromium crashes when
		// it fills up; the temporary directory has room.
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
	)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	stop := func() {
		cancelBrowser()
		cancelAlloc()
		os.RemoveAll(profile)
	}

	// The first Do starts the browser and ties its life to ctx, so the
	// start is bounded by a timer that cancels ctx, not by a deadline on it.
	timer := time.AfterFunc(browserStartTimeout, cancelBrowser)
	err = chromedp.Do(ctx)
	timedOut := !timer.Stop()
	if err != nil {
		stop()
		if timedOut {
			return nil, nil, fmt.Errorf("Chromium (%s) did not start within %s: %w", chromiumPath, browserStartTimeout, err)
		}
		return nil, nil, fmt.Errorf("start Chromium (%s): %w", chromiumPath, err)
	}
	return ctx, stop, nil
}
