package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"lembas/internal/settings"
)

func TestRegisterSignsInAndFirstAccountIsAdmin(t *testing.T) {
	site := newSite(t)
	b := site.browser()
	// A fresh instance sends the first visitor to registration.
	if r := b.get("/auth/login"); r.Header.Get("Location") != "/auth/register" {
		t.Fatalf("fresh instance: /auth/login -> %q", r.Header.Get("Location"))
	}
	r := b.post("/auth/register", url.Values{"username": {"elrond"}, "password": {"imladris1"}, "password_confirm": {"imladris1"}})
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/" {
		t.Fatalf("register: %d -> %q", r.StatusCode, r.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range r.Cookies() {
		if c.Name == SessionCookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Secure {
		t.Fatalf("session cookie = %+v; want HttpOnly, SameSite=Lax, not Secure over plain HTTP", cookie)
	}
	if r := b.get("/admin/general"); r.StatusCode != http.StatusOK {
		t.Fatalf("the first account cannot open /admin/general: %d", r.StatusCode)
	}
	second := site.browser()
	second.register("arwen")
	if r := second.get("/admin/general"); r.StatusCode != http.StatusForbidden {
		t.Fatalf("the second account opened /admin/general: %d", r.StatusCode)
	}
	if r := second.get("/"); !strings.Contains(r.body, "arwen") {
		t.Fatal("home page does not show the signed-in account")
	}
}

func TestSessionCookieIsSecureBehindTLS(t *testing.T) {
	site := newSite(t)
	r := site.browser().post("/auth/register",
		url.Values{"username": {"a"}, "password": {"password1"}, "password_confirm": {"password1"}},
		"X-Forwarded-Proto", "https")
	for _, c := range r.Cookies() {
		if c.Name == SessionCookie && !c.Secure {
			t.Fatal("session cookie not Secure behind TLS")
		}
	}
}

func TestFormMistakesComeBackWithValuesAndMessages(t *testing.T) {
	site := newSite(t)
	b := site.browser()
	r := b.post("/auth/register", url.Values{"username": {"sam wise"}, "password": {"potatoes"}, "password_confirm": {"potatoes"}})
	if r.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("status %d", r.StatusCode)
	}
	if !strings.Contains(r.body, `value="sam wise"`) || !strings.Contains(r.body, "letters, digits") {
		t.Fatal("the form did not come back with the username and a message beside it")
	}
	if strings.Contains(r.body, "potatoes") {
		t.Fatal("the password was echoed back")
	}
	r = b.post("/auth/register", url.Values{"username": {"sam"}, "password": {"potatoes"}, "password_confirm": {"tomatoes"}})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "do not match") {
		t.Fatalf("mismatched confirmation: %d", r.StatusCode)
	}
	b.register("sam")
	other := site.browser()
	r = other.post("/auth/login", url.Values{"username": {"sam"}, "password": {"wrong password"}})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, `value="sam"`) || !strings.Contains(r.body, "do not match") {
		t.Fatalf("wrong password: %d", r.StatusCode)
	}
}

func TestRepeatedFailedSignInsAreSlowedAndSaySo(t *testing.T) {
	site := newSite(t)
	site.browser().register("boromir")
	b := site.browser()
	var r response
	for i := 0; i < 7; i++ {
		r = b.post("/auth/login", url.Values{"username": {"boromir"}, "password": {"one does not simply"}})
	}
	if r.StatusCode != http.StatusTooManyRequests || !strings.Contains(r.body, "Too many failed sign-ins") {
		t.Fatalf("after 7 failures: %d", r.StatusCode)
	}
}

func TestSignInReturnsOnlyToLocalPaths(t *testing.T) {
	site := newSite(t)
	site.browser().register("legolas")
	for next, want := range map[string]string{
		"/settings":             "/settings",
		"//evil.example/x":      "/",
		"https://evil.example/": "/",
		"/\\evil.example":       "/",
		"javascript:alert(1)":   "/",
	} {
		r := site.browser().post("/auth/login", url.Values{"username": {"legolas"}, "password": {"long enough pw"}, "next": {next}})
		if got := r.Header.Get("Location"); got != want {
			t.Errorf("next=%q: redirected to %q, want %q", next, got, want)
		}
	}
	// A page that needs sign-in sends you back to it afterwards.
	r := site.browser().get("/settings")
	if loc := r.Header.Get("Location"); loc != "/auth/login?next=%2Fsettings" {
		t.Fatalf("anonymous /settings -> %q", loc)
	}
}

func TestSignupCanBeClosed(t *testing.T) {
	site := newSite(t)
	admin := site.browser()
	admin.register("gandalf")
	r := admin.post("/admin/general", url.Values{"instance_name": {"Minas Tirith"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d", r.StatusCode)
	}
	r = site.browser().post("/auth/register", url.Values{"username": {"pippin"}, "password": {"password1"}, "password_confirm": {"password1"}})
	if r.StatusCode != http.StatusForbidden || !strings.Contains(r.body, "not taking new accounts") {
		t.Fatalf("closed sign-up: %d", r.StatusCode)
	}
	if r := site.browser().get("/auth/login"); strings.Contains(r.body, "Create one") {
		t.Fatal("the sign-in page still offers registration")
	}
	if r := site.browser().get("/auth/login"); !strings.Contains(r.body, "<title>Sign in · Minas Tirith</title>") {
		t.Fatal("the instance name is not in the title")
	}
}

func TestAdminGeneralShowsEnvironmentValues(t *testing.T) {
	site := newSite(t)
	site.settings.Seed(context.Background(), settings.KeyAllowSignup, false)
	admin := site.browser()
	admin.register("admin") // the first account is allowed despite sign-up being closed
	r := admin.get("/admin/general")
	if !strings.Contains(r.body, "LEMBAS_ALLOW_SIGNUP") {
		t.Fatal("the page does not say sign-up came from the environment")
	}
	admin.post("/admin/general", url.Values{"instance_name": {""}, "allow_signup": {"on"}})
	if r := admin.get("/admin/general"); strings.Contains(r.body, "LEMBAS_ALLOW_SIGNUP") {
		t.Fatal("still says the environment set it after an administrator saved")
	}
	long := strings.Repeat("x", 61)
	r = admin.post("/admin/general", url.Values{"instance_name": {long}})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, long) || !strings.Contains(r.body, "at most 60") {
		t.Fatalf("too long a name: %d", r.StatusCode)
	}
}

func TestThemeIsStoredOnTheAccount(t *testing.T) {
	site := newSite(t)
	b := site.browser()
	b.register("rosie")
	if r := b.get("/"); !strings.Contains(r.body, `data-theme="moria"`) {
		t.Fatal("default theme is not moria")
	}
	if r := b.post("/settings/theme", url.Values{"theme": {"shire"}}, "HX-Request", "true"); r.StatusCode != http.StatusNoContent {
		t.Fatalf("save theme: %d", r.StatusCode)
	}
	if r := b.get("/settings"); !strings.Contains(r.body, `data-theme="shire"`) {
		t.Fatal("theme not applied on the next page")
	}
	if r := b.post("/settings/theme", url.Values{"theme": {"mordor"}}, "HX-Request", "true"); r.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("unknown theme: %d", r.StatusCode)
	}
	// After signing out, the sign-in page keeps the theme: no flash.
	b.post("/auth/logout", nil)
	if r := b.get("/auth/login"); !strings.Contains(r.body, `data-theme="shire"`) {
		t.Fatal("the sign-in page after sign-out lost the theme")
	}
}

func TestPasswordChangeEndsOtherSessions(t *testing.T) {
	site := newSite(t)
	laptop := site.browser()
	laptop.register("faramir")
	phone := site.browser()
	phone.post("/auth/login", url.Values{"username": {"faramir"}, "password": {"long enough pw"}})
	if r := phone.get("/settings"); r.StatusCode != 200 || strings.Count(r.body, `class="list-row"`) != 2 {
		t.Fatalf("settings should list two sessions: %d", r.StatusCode)
	}
	r := laptop.post("/settings/password", url.Values{"current_password": {"wrong"}, "new_password": {"new password"}, "new_password_confirm": {"new password"}})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "not your current password") {
		t.Fatalf("wrong current password: %d", r.StatusCode)
	}
	r = laptop.post("/settings/password", url.Values{"current_password": {"long enough pw"}, "new_password": {"new password"}, "new_password_confirm": {"new password"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("change: %d %s", r.StatusCode, r.body)
	}
	if r := phone.get("/settings"); r.StatusCode != http.StatusSeeOther {
		t.Fatal("the other session survived a password change")
	}
	if r := laptop.get(r.Header.Get("Location")); r.StatusCode != http.StatusOK || !strings.Contains(r.body, "password has been changed") {
		t.Fatal("this session ended, or no notice")
	}
}

func TestSignOutEverywhereElse(t *testing.T) {
	site := newSite(t)
	a := site.browser()
	a.register("treebeard")
	b := site.browser()
	b.post("/auth/login", url.Values{"username": {"treebeard"}, "password": {"long enough pw"}})
	if r := a.post("/settings/sessions/revoke-others", nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke others: %d", r.StatusCode)
	}
	if r := b.get("/"); r.StatusCode != http.StatusSeeOther {
		t.Fatal("the other browser is still signed in")
	}
	if r := a.get("/"); r.StatusCode != http.StatusOK {
		t.Fatal("this browser was signed out")
	}
}

func TestAnotherAccountCannotRevokeMySession(t *testing.T) {
	site := newSite(t)
	mine := site.browser()
	mine.register("frodo")
	sessions, _ := site.auth.Sessions(context.Background(), userID(t, site, "frodo"))
	thief := site.browser()
	thief.register("gollum")
	r := thief.post("/settings/sessions/"+sessions[0].ID+"/revoke", nil)
	if r.StatusCode != http.StatusNotFound {
		t.Fatalf("another account revoking my session: %d, want 404", r.StatusCode)
	}
	if r := mine.get("/"); r.StatusCode != http.StatusOK {
		t.Fatal("my session was ended by another account")
	}
}

func userID(t testing.TB, site *testSite, username string) string {
	t.Helper()
	var id string
	if err := site.db.R.QueryRow(`SELECT id FROM users WHERE username = ?`, username).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestPreferencesTimeZone(t *testing.T) {
	site := newSite(t)
	b := site.browser()
	b.register("bilbo")
	if r := b.get("/"); !strings.Contains(r.body, "data-zone-unset") {
		t.Fatal("a person with no time zone is not offered the browser's")
	}
	// The browser stores its zone alone, with htmx's header: 204.
	if r := b.post("/settings/preferences", url.Values{"timezone": {"Pacific/Auckland"}}, "HX-Request", "true"); r.StatusCode != http.StatusNoContent {
		t.Fatalf("store zone: %d", r.StatusCode)
	}
	r := b.get("/settings")
	if strings.Contains(r.body, "data-zone-unset") || !strings.Contains(r.body, `value="Pacific/Auckland"`) {
		t.Fatal("zone not stored")
	}
	if !strings.Contains(r.body, "NZ") {
		t.Fatal("session times are not shown in the person's zone")
	}
	r = b.post("/settings/preferences", url.Values{"timezone": {"Middle/Earth"}})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, `value="Middle/Earth"`) || !strings.Contains(r.body, "Choose a time zone") {
		t.Fatalf("bad zone: %d", r.StatusCode)
	}
}
