package e2e

import (
	"context"
	"testing"
	"time"
)

// A person who never chose a time zone gets the browser's, stored once,
// and the preferences form offers the browser's list of zones.
func TestTimeZoneComesFromTheBrowser(t *testing.T) {
	s := startSite(t)
	tb := s.openTab(t)
	user := tb.registerFirstAccount(t)
	want := eval[string](t, tb, `Intl.DateTimeFormat().resolvedOptions().timeZone`)
	if want == "" {
		t.Fatal("the browser reports no time zone")
	}
	stored := tb.waitForAnswer(t, "POST", "/settings/preferences", 10*time.Second)
	if stored.status != 204 {
		t.Fatalf("storing the zone: %d %s", stored.status, stored.failure)
	}
	u, err := s.app.Auth.UserByID(context.Background(), user.ID)
	if err != nil || u.Timezone != want {
		t.Fatalf("stored zone %q, want the browser's %q (%v)", u.Timezone, want, err)
	}
	tb.open(t, "/settings")
	if n := eval[int](t, tb, `document.querySelectorAll("#time-zones option").length`); n < 50 {
		t.Fatalf("the zone list offers %d zones", n)
	}
	if got := eval[string](t, tb, `document.querySelector("input[name=timezone]").value`); got != want {
		t.Fatalf("the form shows %q, want %q", got, want)
	}
	tb.assertClean(t)
}
