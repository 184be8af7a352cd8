package e2e

import (
	"testing"
	"time"
)

// TestFirstAccountJourney follows the first person on a new instance: sent
// to register, made administrator, switches the theme (shown at once,
// stored on the account, kept after signing out) and signs out.
func TestFirstAccountJourney(t *testing.T) {
	s := startSite(t)
	tb := s.openTab(t)

	user := tb.registerFirstAccount(t)
	if !user.IsAdmin {
		t.Fatal("the first account is not an administrator")
	}
	tb.assertClean(t)

	// The page says so, and the admin page opens.
	badge := `[...document.querySelectorAll("#sidebar .badge")].some(b => b.textContent.trim() === "Admin")`
	if !eval[bool](t, tb, badge) {
		t.Error(`the home page shows no "Admin" badge for the first account`)
	}
	if status := tb.clickAndLoad(t, `#sidebar a[href="/admin/general"]`); status != 200 {
		t.Fatalf("the Admin link led to status %d", status)
	}
	if got := tb.location(t); got != "/admin/general" {
		t.Fatalf("the Admin link led to %s", got)
	}
	tb.assertClean(t)

	// The theme switch applies the theme before the server has answered.
	if got := tb.theme(t); got != "moria" {
		t.Fatalf("a new account sees theme %q, want the default moria", got)
	}
	tb.click(t, "#theme-toggle")
	if got := tb.theme(t); got != "shire" {
		t.Fatalf("right after clicking #theme-toggle the page shows theme %q, want shire", got)
	}
	saved := tb.waitForAnswer(t, "POST", "/settings/theme", 10*time.Second)
	if saved.status != 204 {
		t.Fatalf("storing the theme: status %d %s", saved.status, saved.failure)
	}
	tb.reload(t)
	if got := tb.theme(t); got != "shire" {
		t.Fatalf("after a reload the page shows theme %q, want shire", got)
	}
	for _, path := range []string{"/settings", "/admin/general"} {
		if status := tb.open(t, path); status != 200 {
			t.Errorf("%s: status %d", path, status)
		}
		if got := tb.theme(t); got != "shire" {
			t.Errorf("%s shows theme %q, want shire", path, got)
		}
	}
	tb.assertClean(t)

	// Signing out keeps the theme on the sign-in page, and closes the rest.
	if status := tb.clickAndLoad(t, "#sign-out"); status != 200 {
		t.Fatalf("signing out ended on status %d", status)
	}
	if got := tb.location(t); got != "/auth/login" {
		t.Fatalf("signing out ended on %s, want /auth/login", got)
	}
	if got := tb.theme(t); got != "shire" {
		t.Errorf("the sign-in page after signing out shows theme %q, want shire", got)
	}
	tb.open(t, "/settings")
	if got := tb.location(t); got != "/auth/login?next=%2Fsettings" {
		t.Errorf("/settings after signing out ended on %s, want the sign-in page", got)
	}
	tb.assertClean(t)
}
