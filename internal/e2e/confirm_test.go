package e2e

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestConfirmDialogIsOurs checks that a form with data-confirm asks in the
// app's own <dialog>, never the browser's confirm(), and that Cancel and
// the confirm button each do what they say.
//
// The contract with ui.js: it intercepts the submit of form[data-confirm]
// and shows a <dialog> with the message and two buttons, "Cancel" and one
// that confirms (the action's own words, or "OK"/"Confirm"). The buttons
// are found by their words, not by class names.
func TestConfirmDialogIsOurs(t *testing.T) {
	s := startSite(t)
	tb := s.openTab(t)
	user := tb.registerFirstAccount(t)

	// A second session, as if signed in from another browser. The page
	// lists it by its address; how it names the browser is its own affair.
	ctx := context.Background()
	const otherUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0"
	const otherIP = "192.0.2.10"
	if _, _, err := s.app.Auth.CreateSession(ctx, user.ID, otherUA, otherIP); err != nil {
		t.Fatal(err)
	}
	sessions := func() int {
		t.Helper()
		list, err := s.app.Auth.Sessions(ctx, user.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}

	if status := tb.open(t, "/settings"); status != 200 {
		t.Fatalf("/settings: status %d", status)
	}
	if !strings.Contains(tb.text(t), otherIP) {
		t.Fatal("/settings does not list the other session")
	}

	const action = "Sign out everywhere else"
	const message = "Sign out every other browser?"
	actionButton := `[...document.querySelectorAll("form[data-confirm] button")].find(b => b.textContent.trim() === "` + action + `")`
	dialogButton := func(pick string) string {
		return `[...document.querySelectorAll("dialog[open] button")].find(b => ` + pick + `)`
	}
	cancelButton := dialogButton(`/^cancel$/i.test(b.textContent.trim())`)
	confirmButton := dialogButton(`["` + strings.ToLower(action) + `", "ok", "confirm", "yes"].includes(b.textContent.trim().toLowerCase())`)

	// askAndWait clicks the action and waits for our dialog.
	askAndWait := func() {
		t.Helper()
		tb.clickFound(t, "the "+action+" button", actionButton)
		if !tb.poll(5*time.Second, `!!document.querySelector("dialog[open]")`) {
			t.Fatalf("no <dialog open> appeared after clicking %q; the page is now %s; the browser reported: %v",
				action, tb.location(t), tb.rec.peek())
		}
		if n := tb.rec.nativeDialogs(); n != 0 {
			t.Errorf("the browser's own confirm() opened %d time(s) as well", n)
		}
		got := eval[string](t, tb, `document.querySelector("dialog[open]").textContent`)
		if !strings.Contains(got, message) {
			t.Errorf("the dialog says %q, want the form's message %q", got, message)
		}
		buttons := eval[[]string](t, tb, `[...document.querySelectorAll("dialog[open] button")].map(b => b.textContent.trim())`)
		if !eval[bool](t, tb, "!!"+cancelButton) || !eval[bool](t, tb, "!!"+confirmButton) {
			t.Fatalf("the dialog's buttons are %q; want Cancel and %q (or OK/Confirm)", buttons, action)
		}
	}

	// Cancel: the dialog goes and nothing is sent.
	askAndWait()
	tb.clickFound(t, "the dialog's Cancel button", cancelButton)
	if !tb.poll(5*time.Second, `!document.querySelector("dialog[open]")`) {
		t.Fatal("the dialog stayed open after Cancel")
	}
	if got := tb.location(t); got != "/settings" {
		t.Errorf("after Cancel the page is %s, want /settings", got)
	}
	if n := tb.rec.count("POST", "/settings/sessions/revoke-others"); n != 0 {
		t.Errorf("after Cancel the form was sent anyway (%d time(s))", n)
	}
	if n := sessions(); n != 2 {
		t.Errorf("after Cancel %d session(s) are left, want 2", n)
	}
	tb.assertClean(t)

	// Confirm: the form goes through once.
	askAndWait()
	tb.clickFound(t, "the dialog's confirm button", confirmButton)
	if !tb.poll(10*time.Second, `location.pathname + location.search === "/settings?done=sessions" && document.readyState === "complete"`) {
		t.Fatalf("after confirming the page is %s, want /settings?done=sessions", tb.location(t))
	}
	if text := tb.text(t); !strings.Contains(text, "Every other session has been signed out.") {
		t.Errorf("no notice that the other sessions were signed out; the page says:\n%s", text)
	}
	if n := tb.rec.count("POST", "/settings/sessions/revoke-others"); n != 1 {
		t.Errorf("the form was sent %d times, want once", n)
	}
	if n := sessions(); n != 1 {
		t.Errorf("%d session(s) left, want only this one", n)
	}
	if n := tb.rec.nativeDialogs(); n != 0 {
		t.Errorf("the browser's own dialog opened %d time(s)", n)
	}
	tb.assertClean(t)
}
