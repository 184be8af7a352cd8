package web

import (
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
)

// accessCase says what each kind of caller gets from one route. A status of
// 303 to the sign-in page is what an anonymous page load gets.
type accessCase struct {
	pattern string // exactly as in routes.go
	path    string // a concrete path for it
	form    url.Values
	anon    int
	user    int
	admin   int
}

var accessCases = []accessCase{
	{"GET /healthz", "/healthz", nil, 200, 200, 200},
	{"GET /manifest.webmanifest", "/manifest.webmanifest", nil, 200, 200, 200},
	{"GET /sw.js", "/sw.js", nil, 200, 200, 200},
	{"GET /offline", "/offline", nil, 200, 200, 200},
	{"GET /favicon.ico", "/favicon.ico", nil, 301, 301, 301},
	{"GET /static/{path...}", "/static/css/app.css", nil, 200, 200, 200},
	{"GET /auth/login", "/auth/login", nil, 200, 303, 303},
	{"POST /auth/login", "/auth/login", url.Values{"username": {"nobody"}, "password": {"x"}}, 422, 422, 422},
	{"GET /auth/register", "/auth/register", nil, 200, 303, 303},
	{"POST /auth/register", "/auth/register", url.Values{"username": {"bad name"}}, 422, 422, 422},
	{"POST /auth/logout", "/auth/logout", nil, 303, 303, 303},
	{"GET /{$}", "/", nil, 303, 200, 200},
	{"GET /settings", "/settings", nil, 303, 200, 200},
	{"POST /settings/theme", "/settings/theme", url.Values{"theme": {"shire"}}, 401, 303, 303},
	{"POST /settings/password", "/settings/password", url.Values{"current_password": {"wrong"}}, 401, 422, 422},
	{"POST /settings/sessions/revoke-others", "/settings/sessions/revoke-others", nil, 401, 303, 303},
	{"POST /settings/sessions/{id}/revoke", "/settings/sessions/not-a-session/revoke", nil, 401, 404, 404},
	{"GET /admin", "/admin", nil, 303, 403, 303},
	{"GET /admin/general", "/admin/general", nil, 303, 403, 200},
	{"POST /admin/general", "/admin/general", url.Values{"instance_name": {"Rivendell"}, "allow_signup": {"on"}}, 401, 403, 303},
}

func TestEveryRouteChecksWhoIsAsking(t *testing.T) {
	site := newSite(t)
	admin, user, anon := site.people()
	for _, c := range accessCases {
		for _, who := range []struct {
			name string
			b    *browser
			want int
		}{{"anonymous", anon, c.anon}, {"user", user, c.user}, {"admin", admin, c.admin}} {
			method, _, _ := strings.Cut(c.pattern, " ")
			if c.pattern == "POST /auth/logout" {
				continue // checked below: it would end the session used by later cases
			}
			r := who.b.do(method, c.path, formFor(method, c.form))
			if r.StatusCode != who.want {
				t.Errorf("%s %s as %s: %d, want %d", method, c.path, who.name, r.StatusCode, who.want)
			}
		}
	}
	// Logout for each, last.
	for _, b := range []*browser{anon, user, admin} {
		if r := b.post("/auth/logout", nil); r.StatusCode != http.StatusSeeOther {
			t.Errorf("logout: %d", r.StatusCode)
		}
	}
	if r := admin.get("/settings"); r.StatusCode != http.StatusSeeOther {
		t.Errorf("after logout /settings answered %d, want a redirect to sign in", r.StatusCode)
	}
}

func formFor(method string, form url.Values) url.Values {
	if method == "POST" && form == nil {
		return url.Values{}
	}
	return form
}

// Every route in routes.go must have a row in accessCases, so a new route
// cannot land without saying who may use it.
func TestAccessTableCoversEveryRoute(t *testing.T) {
	src, err := os.ReadFile("routes.go")
	if err != nil {
		t.Fatal(err)
	}
	registered := regexp.MustCompile(`mux\.Handle\("([^"]+)"`).FindAllStringSubmatch(string(src), -1)
	if len(registered) == 0 {
		t.Fatal("found no routes in routes.go")
	}
	covered := map[string]bool{}
	for _, c := range accessCases {
		covered[c.pattern] = true
	}
	for _, m := range registered {
		if !covered[m[1]] {
			t.Errorf("route %q has no access test case", m[1])
		}
	}
}
