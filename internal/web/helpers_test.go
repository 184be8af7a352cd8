package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"lembas/internal/auth"
	"lembas/internal/catalog"
	"lembas/internal/chat"
	"lembas/internal/db"
	"lembas/internal/llm"
	"lembas/internal/llm/llmtest"
	"lembas/internal/render"
	"lembas/internal/reply"
	"lembas/internal/secret"
	"lembas/internal/settings"
)

// cheapParams keep registration fast in tests; the parameters travel in
// each hash, so every code path is the production one.
var cheapParams = auth.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

type testSite struct {
	*httptest.Server
	t        testing.TB
	web      *Server
	db       *db.DB
	auth     *auth.Service
	settings *settings.Store
	catalog  *catalog.Service
	chats    *chat.Service
	replies  *reply.Registry
}

// newSite runs the real handler stack over a fresh database, for tests and
// benchmarks alike.
func newSite(t testing.TB) *testSite {
	t.Helper()
	ctx := context.Background()
	d, err := db.Open(ctx, filepath.Join(t.TempDir(), "lembas.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := settings.Open(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	a := auth.New(d, auth.Options{Params: cheapParams, Settings: st})
	key, _ := secret.ParseKey(secret.NewKey())
	box, _ := secret.New(key)
	client := llm.New(llm.Options{})
	cat := catalog.New(d, box, catalog.Options{Lister: client, FilesDir: t.TempDir()})
	chats := chat.New(d, nil)
	replies := reply.New(reply.Deps{Chats: chats, Catalog: cat, Auth: a, Streamer: client,
		NewRenderer: func() reply.Renderer { return new(render.Stream) }, RenderMarkdown: render.Markdown, InstancePrompt: st.SystemPrompt})
	runCtx, stopReplies := context.WithCancel(context.Background())
	go replies.Run(runCtx)
	s, err := New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), DB: d, Auth: a, Settings: st, Catalog: cat,
		Chats: chats, Replies: replies, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		s.Close()
		srv.Close()
		stopReplies()
		replies.Wait()
		d.Close()
	})
	return &testSite{Server: srv, t: t, web: s, db: d, auth: a, settings: st, catalog: cat, chats: chats, replies: replies}
}

// browser is a client with its own cookie jar that does not follow
// redirects, so tests see each answer.
type browser struct {
	site *testSite
	c    *http.Client
}

func (s *testSite) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{site: s, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type response struct {
	*http.Response
	body string
}

func (b *browser) do(method, path string, form url.Values, header ...string) response {
	b.site.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.site.URL+path, body)
	if err != nil {
		b.site.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept", "text/html")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.site.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return response{Response: res, body: string(raw)}
}

func (b *browser) get(path string, header ...string) response {
	return b.do("GET", path, nil, header...)
}

func (b *browser) post(path string, form url.Values, header ...string) response {
	if form == nil {
		form = url.Values{}
	}
	return b.do("POST", path, form, header...)
}

// register creates an account through the form and keeps its session.
func (b *browser) register(username string) {
	b.site.t.Helper()
	r := b.post("/auth/register", url.Values{"username": {username}, "password": {"long enough pw"}, "password_confirm": {"long enough pw"}})
	if r.StatusCode != http.StatusSeeOther {
		b.site.t.Fatalf("register %s: %d %s", username, r.StatusCode, r.body)
	}
}

// people returns a signed-in admin (the first account) and user.
func (s *testSite) people() (admin, user, anon *browser) {
	admin, user, anon = s.browser(), s.browser(), s.browser()
	admin.register("admin")
	user.register("user")
	return admin, user, anon
}

func mustUser(t *testing.T, site *testSite, id string) auth.User {
	t.Helper()
	u, err := site.auth.UserByID(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// finishedChat writes a chat for username with one finished exchange,
// without going through a model.
func (s *testSite) finishedChat(t *testing.T, username, modelID string) chat.Started {
	t.Helper()
	st, err := s.chats.Start(t.Context(), userID(t, s, username), "Hello", chat.Seed{ModelID: modelID, ModelName: "Fake"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.chats.Finish(t.Context(), st.Assistant.ID, chat.Final{Content: "Hi!", HTML: "<p>Hi!</p>", Status: chat.StatusDone}); err != nil {
		t.Fatal(err)
	}
	return st
}

// fakeConnectionTo adds a connection to up and discovers its models.
func (s *testSite) fakeConnectionTo(t testing.TB, up *llmtest.Server) (connID, modelID string) {
	t.Helper()
	c, err := s.catalog.CreateConnection(t.Context(), catalog.ConnectionForm{Name: "Fake " + up.URL, BaseURL: up.URL, Timeout: "5"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := s.catalog.Discover(t.Context(), c.ID); err != nil || res.Err != nil {
		t.Fatalf("discover: %v %v", err, res.Err)
	}
	return c.ID, s.firstModel(t, c.ID)
}

// fakeConnection adds a connection to a fake upstream listing two models,
// discovers them, and returns the connection's id and the first model's.
func (s *testSite) fakeConnection(t testing.TB, name string, specs ...llmtest.ModelSpec) (connID, modelID string) {
	t.Helper()
	up := llmtest.NewServer(t)
	if len(specs) == 0 {
		specs = []llmtest.ModelSpec{{ID: "alpha-7b"}, {ID: "beta-13b"}}
	}
	up.SetModels(llmtest.ShapeOpenAI, specs...)
	c, err := s.catalog.CreateConnection(t.Context(), catalog.ConnectionForm{Name: name, BaseURL: up.URL, Timeout: "5"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := s.catalog.Discover(t.Context(), c.ID); err != nil || res.Err != nil {
		t.Fatalf("discover: %v %v", err, res.Err)
	}
	models, _, err := s.catalog.ListModels(t.Context(), catalog.Filter{ConnectionID: c.ID})
	if err != nil || len(models) == 0 {
		t.Fatalf("no models: %v", err)
	}
	return c.ID, models[0].ID
}
