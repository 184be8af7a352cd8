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

	// Chats. {chat} belongs to "user"; the admin is another account here,
	// and an administrator does not see other people's chats: 404.
	{"GET /chat", "/chat", nil, 303, 200, 200},
	{"GET /chat/{id}", "/chat/{chat}", nil, 303, 200, 404},
	{"POST /api/chats/start", "/api/chats/start", url.Values{"content": {""}, "model": {"{model}"}}, 401, 422, 422},
	{"POST /api/chats/{id}/messages", "/api/chats/{chat}/messages", url.Values{"content": {""}}, 401, 422, 404},
	{"GET /api/chats/{id}/messages/{mid}/stream", "/api/chats/{chat}/messages/{reply}/stream", nil, 303, 200, 404},
	{"POST /api/chats/{id}/messages/{mid}/regenerate", "/api/chats/{chat}/messages/missing/regenerate", nil, 401, 404, 404},
	{"POST /api/chats/{id}/messages/{mid}/edit", "/api/chats/{chat}/messages/{turn}/edit", url.Values{"content": {""}}, 401, 422, 404},
	{"POST /api/chats/{id}/messages/{mid}/withdraw", "/api/chats/{chat}/messages/missing/withdraw", nil, 401, 404, 404},
	{"POST /api/chats/{id}/stop", "/api/chats/{chat}/stop", nil, 401, 303, 404},
	{"POST /api/chats/{id}/title", "/api/chats/{chat}/title", url.Values{"title": {""}}, 401, 422, 404},
	{"POST /api/chats/{id}/settings", "/api/chats/{chat}/settings", url.Values{"effort": {"extreme"}}, 401, 422, 404},
	{"GET /settings", "/settings", nil, 303, 200, 200},
	{"POST /settings/theme", "/settings/theme", url.Values{"theme": {"shire"}}, 401, 303, 303},
	{"POST /settings/preferences", "/settings/preferences", url.Values{"timezone": {"Europe/Paris"}}, 401, 303, 303},
	{"POST /settings/password", "/settings/password", url.Values{"current_password": {"wrong"}}, 401, 422, 422},
	{"POST /settings/sessions/revoke-others", "/settings/sessions/revoke-others", nil, 401, 303, 303},
	{"POST /settings/sessions/{id}/revoke", "/settings/sessions/not-a-session/revoke", nil, 401, 404, 404},
	{"GET /admin", "/admin", nil, 303, 403, 303},
	{"GET /admin/general", "/admin/general", nil, 303, 403, 200},
	{"POST /admin/general", "/admin/general", url.Values{"instance_name": {"Rivendell"}, "allow_signup": {"on"}}, 401, 403, 303},

	// Connections and models. {conn} and {model} are a real connection to
	// a fake upstream and one of its models.
	{"GET /admin/connections", "/admin/connections", nil, 303, 403, 200},
	{"POST /admin/connections", "/admin/connections", url.Values{"name": {""}}, 401, 403, 422},
	{"GET /admin/connections/{id}", "/admin/connections/{conn}", nil, 303, 403, 200},
	{"POST /admin/connections/{id}", "/admin/connections/{conn}", url.Values{"name": {""}}, 401, 403, 422},
	{"POST /admin/connections/{id}/test", "/admin/connections/{conn}/test", nil, 401, 403, 303},
	{"POST /admin/connections/{id}/discover", "/admin/connections/{conn}/discover", nil, 401, 403, 303},
	{"POST /admin/connections/{id}/enabled", "/admin/connections/missing/enabled", url.Values{"enabled": {"false"}}, 401, 403, 404},
	{"POST /admin/connections/{id}/delete", "/admin/connections/missing/delete", nil, 401, 403, 404},
	{"GET /admin/models", "/admin/models?tab=enabled", nil, 303, 403, 200},
	{"POST /admin/models/bulk", "/admin/models/bulk", url.Values{"action": {"enable"}, "id": {"{model}"}}, 401, 403, 303},
	{"POST /admin/models/reorder", "/admin/models/reorder", url.Values{"id": {"{model}"}}, 401, 403, 303},
	{"GET /admin/models/{id}/edit", "/admin/models/{model}/edit", nil, 303, 403, 200},
	{"POST /admin/models/{id}", "/admin/models/{model}", url.Values{"temperature": {"9"}}, 401, 403, 422},
	{"POST /admin/models/{id}/groups", "/admin/models/missing/groups", nil, 401, 403, 404},
	{"POST /admin/models/{id}/avatar", "/admin/models/{model}/avatar", url.Values{}, 401, 403, 422},
	{"POST /admin/models/{id}/avatar/delete", "/admin/models/missing/avatar/delete", nil, 401, 403, 404},
	{"POST /admin/models/{id}/pin", "/admin/models/{model}/pin", url.Values{"on": {"true"}}, 401, 403, 303},
	{"POST /admin/models/{id}/enabled", "/admin/models/{model}/enabled", url.Values{"on": {"true"}}, 401, 403, 303},
	{"POST /admin/models/{id}/hidden", "/admin/models/{model}/hidden", url.Values{"on": {"false"}}, 401, 403, 303},
	{"POST /admin/models/{id}/default", "/admin/models/{model}/default", url.Values{"on": {"true"}}, 401, 403, 303},
	{"POST /admin/models/{id}/move", "/admin/models/{model}/move", url.Values{"direction": {"up"}}, 401, 403, 303},
	{"GET /models/{id}/avatar", "/models/{model}/avatar", nil, 303, 404, 404},

	// People. {user} and {group} are replaced with real ids; destructive
	// actions aim at ids that do not exist, so the admin's answer (404)
	// proves the guard let them through without changing anything.
	{"GET /admin/users", "/admin/users?q=us", nil, 303, 403, 200},
	{"POST /admin/users", "/admin/users", url.Values{"username": {"bad name"}}, 401, 403, 422},
	{"GET /admin/users/{id}", "/admin/users/{user}", nil, 303, 403, 200},
	{"POST /admin/users/{id}/admin", "/admin/users/missing/admin", url.Values{"admin": {"true"}}, 401, 403, 404},
	{"POST /admin/users/{id}/disabled", "/admin/users/missing/disabled", url.Values{"disabled": {"true"}}, 401, 403, 404},
	{"POST /admin/users/{id}/password", "/admin/users/{user}/password", url.Values{"password": {"short"}}, 401, 403, 422},
	{"POST /admin/users/{id}/delete", "/admin/users/missing/delete", nil, 401, 403, 404},
	{"POST /admin/permissions", "/admin/permissions", url.Values{"permissions": {"chat.links", "chat.attachments"}}, 401, 403, 303},
	{"GET /admin/groups", "/admin/groups", nil, 303, 403, 200},
	{"POST /admin/groups", "/admin/groups", url.Values{"name": {""}}, 401, 403, 422},
	{"GET /admin/groups/{id}", "/admin/groups/{group}", nil, 303, 403, 200},
	{"POST /admin/groups/{id}", "/admin/groups/{group}", url.Values{"name": {"Fellowship"}}, 401, 403, 303},
	{"POST /admin/groups/{id}/permissions", "/admin/groups/{group}/permissions", url.Values{"permissions": {"chat.links"}}, 401, 403, 303},
	{"POST /admin/groups/{id}/limits", "/admin/groups/{group}/limits", url.Values{"monthly_tokens": {"1000"}}, 401, 403, 303},
	{"POST /admin/groups/{id}/members", "/admin/groups/{group}/members", url.Values{"username": {"nobody"}}, 401, 403, 422},
	{"POST /admin/groups/{id}/members/{userID}/remove", "/admin/groups/{group}/members/{user}/remove", nil, 401, 403, 303},
	{"POST /admin/groups/{id}/delete", "/admin/groups/missing/delete", nil, 401, 403, 404},
}

func TestEveryRouteChecksWhoIsAsking(t *testing.T) {
	site := newSite(t)
	admin, user, anon := site.people()
	g, err := site.auth.CreateGroup(t.Context(), "Fellowship", "")
	if err != nil {
		t.Fatal(err)
	}
	conn, model := site.fakeConnection(t, "Fake")
	st := site.finishedChat(t, "user", model)
	ids := strings.NewReplacer("{user}", userID(t, site, "user"), "{group}", g.ID, "{conn}", conn, "{model}", model,
		"{chat}", st.Chat.ID, "{reply}", st.Assistant.ID, "{turn}", st.User.ID)
	for _, c := range accessCases {
		c.path = ids.Replace(c.path)
		if c.form != nil {
			form := url.Values{}
			for k, vs := range c.form {
				for _, v := range vs {
					form.Add(k, ids.Replace(v))
				}
			}
			c.form = form
		}
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
