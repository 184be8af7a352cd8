package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"lembas/internal/app"
	"lembas/internal/auth"
	"lembas/internal/config"
	"lembas/internal/web"
)

// tabTimeout bounds everything one tab does; a test that hangs fails with
// a deadline instead of eating the whole package's time.
const tabTimeout = 30 * time.Second

// cheapParams keep sign-up and sign-in fast; the parameters travel in each
// hash, so every code path is still the production one.
var cheapParams = auth.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

// The account every test creates first. "mellon" is what opens Moria.
const (
	testUser     = "frodo"
	testPassword = "mellon-friend"
)

// site is one running LLeMbas with its own data directory.
type site struct {
	app  *app.App
	base string // http://127.0.0.1:PORT
}

// startSite runs a real LLeMbas (app.New, Listen, Serve) until the test
// ends; the cleanup cancels Serve and waits for it to return.
func startSite(t *testing.T) *site {
	t.Helper()
	cfg := config.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), LogLevel: slog.LevelError}
	// Only errors reach the test log: a 500 or a panic is worth reading
	// next to the failure it causes.
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: cfg.LogLevel}))
	a, err := app.New(context.Background(), cfg, log, app.Options{Version: "e2e", AuthParams: cheapParams})
	if err != nil {
		t.Fatalf("start LLeMbas: %v", err)
	}
	ln, err := a.Listen()
	if err != nil {
		a.Close()
		t.Fatalf("start LLeMbas: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("LLeMbas stopped with an error: %v", err)
			}
		case <-time.After(app.ShutdownGrace + 5*time.Second):
			t.Errorf("LLeMbas did not stop within %s", app.ShutdownGrace+5*time.Second)
		}
	})
	return &site{app: a, base: "http://" + ln.Addr().String()}
}

// tab is one browser tab, in a browser context of its own (own cookies),
// with everything the page complains about collected in rec.
type tab struct {
	site  *site
	ctx   context.Context // the tab, bounded by tabTimeout
	rec   *recorder
	close func() // closes the tab; safe to call more than once
}

// openTab opens a tab on s at 1280×800. When the test ends, whatever the
// page reported and no assertClean looked at yet fails the test.
func (s *site) openTab(t *testing.T) *tab {
	t.Helper()
	if browserErr != nil {
		t.Fatal(browserErr)
	}
	rec := &recorder{requests: map[network.RequestID]*request{}}
	tabCtx, closeTab := chromedp.NewContext(browserCtx,
		chromedp.WithNewBrowserContext(),
		chromedp.WithListener(rec.listen))
	// Attach first, without a deadline: the first run ties the tab's
	// event loop to the context it is given.
	if err := chromedp.Do(tabCtx); err != nil {
		closeTab()
		t.Fatalf("open a tab: %v", err)
	}

	// A native alert or confirm would block the page and every action
	// after it. rec has already counted it as a problem; dismiss it so
	// the test goes on to report it.
	var wg sync.WaitGroup
	native := chromedp.Events(tabCtx, page.JavascriptDialogOpening)
	wg.Go(func() {
		for _, err := range native {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(tabCtx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	})

	ctx, cancel := context.WithTimeout(tabCtx, tabTimeout)
	var once sync.Once
	tb := &tab{site: s, ctx: ctx, rec: rec, close: func() {
		once.Do(func() {
			cancel()
			closeTab()
		})
	}}
	t.Cleanup(func() {
		if ctx.Err() == nil {
			tb.assertClean(t)
		}
		tb.close()
		wg.Wait()
	})
	tb.resize(t, 1280, 800)
	return tb
}

// resize sets the viewport. It emulates a desktop browser of that width
// rather than a phone, so the layout viewport is exactly width wide and an
// overflow shows up as scroll width instead of being zoomed away.
func (tb *tab) resize(t *testing.T, width, height int64) {
	t.Helper()
	if err := chromedp.Do(tb.ctx, chromedp.EmulateViewport(width, height)); err != nil {
		t.Fatalf("set the viewport to %d×%d: %v", width, height, err)
	}
}

// open loads path and returns the status of the document it ends on,
// after any redirects.
func (tb *tab) open(t *testing.T, path string) int64 {
	t.Helper()
	resp, err := chromedp.Run(tb.ctx, chromedp.NavigateResponse(tb.site.base+path))
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	if resp == nil {
		t.Fatalf("open %s: no response", path)
	}
	return resp.Status
}

// reload loads the current page again.
func (tb *tab) reload(t *testing.T) {
	t.Helper()
	if err := chromedp.Do(tb.ctx, chromedp.Reload()); err != nil {
		t.Fatalf("reload: %v", err)
	}
}

// location is the path and query of the page in the tab.
func (tb *tab) location(t *testing.T) string {
	t.Helper()
	return eval[string](t, tb, `location.pathname + location.search`)
}

// theme is the theme the page shows: data-theme on <html>.
func (tb *tab) theme(t *testing.T) string {
	t.Helper()
	return eval[string](t, tb, `document.documentElement.dataset.theme || ""`)
}

// text is everything the page shows, as the person reads it.
func (tb *tab) text(t *testing.T) string {
	t.Helper()
	return eval[string](t, tb, `document.body.innerText`)
}

// fill types value into the input named name.
func (tb *tab) fill(t *testing.T, name, value string) {
	t.Helper()
	sel := chromedp.CSS(fmt.Sprintf("input[name=%q]", name))
	if err := chromedp.Do(tb.ctx, chromedp.SendKeys(sel, value)); err != nil {
		t.Fatalf("type into %s: %v", name, err)
	}
}

// click clicks the first visible element css matches, with the mouse.
func (tb *tab) click(t *testing.T, css string) {
	t.Helper()
	if err := chromedp.Do(tb.ctx, chromedp.Click(chromedp.CSS(css))); err != nil {
		t.Fatalf("click %s: %v", css, err)
	}
}

// clickFound clicks the element a JavaScript expression finds: the way to
// pick a button by its words rather than by a class name.
func (tb *tab) clickFound(t *testing.T, what, expr string) {
	t.Helper()
	if err := chromedp.Do(tb.ctx, chromedp.Click(chromedp.JSPath(expr))); err != nil {
		t.Fatalf("click %s: %v", what, err)
	}
}

// clickAndLoad clicks css, waits for the page it leads to and returns that
// document's status.
func (tb *tab) clickAndLoad(t *testing.T, css string) int64 {
	t.Helper()
	resp, err := chromedp.RunResponse(tb.ctx, chromedp.Click(chromedp.CSS(css)))
	if err != nil {
		t.Fatalf("click %s and wait for the next page: %v", css, err)
	}
	if resp == nil {
		t.Fatalf("click %s: no page loaded", css)
	}
	return resp.Status
}

// clickFoundAndLoad clicks the element a JavaScript expression finds,
// waits for the page it leads to and returns that document's status.
func (tb *tab) clickFoundAndLoad(t *testing.T, what, expr string) int64 {
	t.Helper()
	resp, err := chromedp.RunResponse(tb.ctx, chromedp.Click(chromedp.JSPath(expr)))
	if err != nil {
		t.Fatalf("click %s and wait for the next page: %v", what, err)
	}
	if resp == nil {
		t.Fatalf("click %s: no page loaded", what)
	}
	return resp.Status
}

// press types keys into whatever has the focus, as a person at the
// keyboard does; kb names the special keys (kb.ArrowDown, kb.Enter …).
func (tb *tab) press(t *testing.T, keys string) {
	t.Helper()
	if err := chromedp.Do(tb.ctx, keyPresses(keys)); err != nil {
		t.Fatalf("press %q: %v", keys, err)
	}
}

// Modifier keys for pressWith, as the DevTools protocol numbers them
// (Alt is 1, Meta/Command 4).
const (
	modCtrl  int64 = 2
	modShift int64 = 8
)

// pressWith presses keys while holding modifiers (modShift, modCtrl …).
func (tb *tab) pressWith(t *testing.T, modifiers int64, keys string) {
	t.Helper()
	if err := chromedp.Do(tb.ctx, modifiedKeyPresses(modifiers, keys)); err != nil {
		t.Fatalf("press %q with modifiers %d: %v", keys, modifiers, err)
	}
}

// pressAndLoad presses keys that lead to another page, waits for it and
// returns that document's status.
func (tb *tab) pressAndLoad(t *testing.T, keys string) int64 {
	t.Helper()
	resp, err := chromedp.RunResponse(tb.ctx, keyPresses(keys))
	if err != nil {
		t.Fatalf("press %q and wait for the next page: %v", keys, err)
	}
	if resp == nil {
		t.Fatalf("press %q: no page loaded", keys)
	}
	return resp.Status
}

// buttonNamed is a JavaScript expression finding the first button whose
// words are exactly name, for clickFound and clickFoundAndLoad.
func buttonNamed(name string) string {
	return fmt.Sprintf(`[...document.querySelectorAll("button")].find(b => b.textContent.trim() === %q)`, name)
}

// eval runs a JavaScript expression in the page and decodes its value.
func eval[T any](t *testing.T, tb *tab, expr string) T {
	t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// poll evaluates a boolean expression until it is true or within passes,
// and reports which. It survives navigations: an expression that fails
// while the next page loads counts as false.
func (tb *tab) poll(within time.Duration, expr string) bool {
	ctx, cancel := context.WithTimeout(tb.ctx, within)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr)); err == nil && ok {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// waitForAnswer waits until the server has answered the page's latest
// method request to path, and returns it.
func (tb *tab) waitForAnswer(t *testing.T, method, path string, within time.Duration) request {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, within)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if r, ok := tb.rec.answered(method, path); ok {
			return r
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s %s got no answer within %s", method, path, within)
		case <-tick.C:
		}
	}
}

// assertClean fails t listing every console error or warning, uncaught
// exception, CSP violation, failed subresource and native dialog the page
// reported since the last call.
func (tb *tab) assertClean(t *testing.T) {
	t.Helper()
	// A round trip to the tab: the listener has seen every event that
	// arrived before its answer.
	_ = chromedp.Do(tb.ctx, chromedp.Evaluate[chromedp.Void](`0`))
	if problems := tb.rec.take(); len(problems) > 0 {
		t.Errorf("the browser reported %d problem(s):\n\t%s", len(problems), strings.Join(problems, "\n\t"))
	}
}

// account is who the tab is signed in as, read from its session cookie.
func (tb *tab) account(t *testing.T) (auth.User, auth.Session) {
	t.Helper()
	res, err := chromedp.Call(tb.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{tb.site.base + "/"}})
	if err != nil {
		t.Fatalf("read cookies: %v", err)
	}
	for _, c := range res.Cookies {
		if c.Name != web.SessionCookie {
			continue
		}
		u, sess, err := tb.site.app.Auth.SessionUser(context.Background(), c.Value)
		if err != nil {
			t.Fatalf("the session cookie names no session: %v", err)
		}
		return u, sess
	}
	t.Fatalf("no %s cookie: not signed in", web.SessionCookie)
	return auth.User{}, auth.Session{}
}

// registerFirstAccount opens the site fresh, is sent to the registration
// form, creates testUser and lands on the home page signed in.
func (tb *tab) registerFirstAccount(t *testing.T) auth.User {
	t.Helper()
	tb.open(t, "/")
	if got := tb.location(t); got != "/auth/register" {
		t.Fatalf("a fresh instance sent / to %s, want /auth/register", got)
	}
	tb.fill(t, "username", testUser)
	tb.fill(t, "password", testPassword)
	tb.fill(t, "password_confirm", testPassword)
	if status := tb.clickAndLoad(t, `form[action="/auth/register"] button[type=submit]`); status != 200 {
		t.Fatalf("registering ended on status %d", status)
	}
	if got := tb.location(t); got != "/" {
		t.Fatalf("registering ended on %s, want /", got)
	}
	u, _ := tb.account(t)
	return u
}

// signIn signs testUser in through the sign-in form.
func (tb *tab) signIn(t *testing.T) {
	t.Helper()
	tb.signInAs(t, testUser, testPassword)
}

// signInAs signs an account in through the sign-in form.
func (tb *tab) signInAs(t *testing.T, username, password string) {
	t.Helper()
	tb.open(t, "/auth/login")
	tb.fill(t, "username", username)
	tb.fill(t, "password", password)
	if status := tb.clickAndLoad(t, `form[action="/auth/login"] button[type=submit]`); status != 200 {
		t.Fatalf("signing in ended on status %d", status)
	}
	if got := tb.location(t); got != "/" {
		t.Fatalf("signing in ended on %s, want /", got)
	}
}

// keyPresses presses and releases each key of keys the way a keyboard
// does: a keydown carrying the key's text, from which the browser makes
// the keypress itself, then a keyup. chromedp.KeyEvent sends the keypress
// as an event of its own instead ("char"), which the browser delivers even
// when the page cancelled the keydown; a real keyboard's is suppressed
// then. Where the keydown moves the focus (choosing in a listbox returns it
// to the button) that stray keypress lands on the new element, and an
// Enter clicks whatever button has the focus by then.
func keyPresses(keys string) chromedp.Action[chromedp.Void] {
	return modifiedKeyPresses(0, keys)
}

// modifiedKeyPresses is keyPresses with modifier keys held down: a bit
// field of input.DispatchKeyEventParams.Modifiers (modCtrl, modShift).
func modifiedKeyPresses(modifiers int64, keys string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, r := range keys {
			var down, up *input.DispatchKeyEventParams
			var text, unmodified string
			for _, ev := range kb.Encode(r) {
				switch ev.Type {
				case input.DispatchKeyEventTypeKeyDown:
					down = ev
				case input.DispatchKeyEventTypeKeyUp:
					up = ev
				case input.DispatchKeyEventTypeChar:
					text, unmodified = ev.Text, ev.UnmodifiedText
				}
			}
			if down == nil || up == nil {
				return fmt.Errorf("no key for %q", r)
			}
			if text == "" {
				down.Type = input.DispatchKeyEventTypeRawKeyDown
			}
			down.Text, down.UnmodifiedText = text, unmodified
			down.Modifiers, up.Modifiers = modifiers, modifiers
			for _, ev := range []*input.DispatchKeyEventParams{down, up} {
				if _, err := cdp.Call(ctx, tg, input.DispatchKeyEvent, *ev); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
