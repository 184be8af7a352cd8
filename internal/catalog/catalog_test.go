package catalog

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"lembas/internal/auth"
	"lembas/internal/db"
	"lembas/internal/fault"
	"lembas/internal/llm"
	"lembas/internal/secret"
)

// fakeLister answers ListModels from a table keyed by base URL.
type fakeLister struct {
	mu     sync.Mutex
	models map[string][]llm.Model
	err    error
	block  bool // wait for the context to end, as a stalled server would
	calls  int
	lastEp llm.Endpoint
}

func (f *fakeLister) ListModels(ctx context.Context, ep llm.Endpoint) ([]llm.Model, error) {
	f.mu.Lock()
	f.calls++
	f.lastEp = ep
	block, err, ms := f.block, f.err, slices.Clone(f.models[ep.BaseURL])
	f.mu.Unlock()
	if block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return ms, err
}

func (f *fakeLister) set(baseURL string, ms ...llm.Model) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.models == nil {
		f.models = map[string][]llm.Model{}
	}
	f.models[baseURL] = ms
}

type env struct {
	s        *Service
	lister   *fakeLister
	db       *db.DB
	dir      string // data directory: the database and files live here
	filesDir string
	auth     *auth.Service
}

var cheap = auth.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	d, err := db.Open(context.Background(), filepath.Join(dir, "lembas.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	key, err := secret.ParseKey(secret.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	l := &fakeLister{}
	files := filepath.Join(dir, "files")
	return &env{
		s:      New(d, box, Options{Lister: l, FilesDir: files}),
		lister: l, db: d, dir: dir, filesDir: files,
		auth: auth.New(d, auth.Options{Params: cheap}),
	}
}

func (e *env) conn(t *testing.T, name, baseURL string) Connection {
	t.Helper()
	c, err := e.s.CreateConnection(context.Background(), ConnectionForm{Name: name, BaseURL: baseURL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (e *env) discover(t *testing.T, connID string) DiscoverResult {
	t.Helper()
	res, err := e.s.Discover(context.Background(), connID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Err != nil {
		t.Fatalf("discover: upstream error %v", res.Err)
	}
	return res
}

// models returns every model by upstream name.
func (e *env) models(t *testing.T) map[string]Model {
	t.Helper()
	ms, _, err := e.s.ListModels(context.Background(), Filter{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Model{}
	for _, m := range ms {
		out[m.UpstreamName] = m
	}
	return out
}

// order returns upstream names in position order, checking that the
// positions are exactly 0..n-1.
func (e *env) order(t *testing.T) []string {
	t.Helper()
	rows, err := e.db.R.Query(`SELECT m.upstream_name, m.position FROM models m ORDER BY m.position, m.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for i := 0; rows.Next(); i++ {
		var n string
		var p int
		if err := rows.Scan(&n, &p); err != nil {
			t.Fatal(err)
		}
		if p != i {
			t.Fatalf("position %d at index %d: the order is not dense", p, i)
		}
		names = append(names, n)
	}
	return names
}

func (e *env) user(t *testing.T, name string, admin bool) auth.User {
	t.Helper()
	u, err := e.auth.CreateUser(context.Background(), name, "password123", admin)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func ptr[T any](v T) *T { return &v }

func named(names ...string) []llm.Model {
	var out []llm.Model
	for _, n := range names {
		out = append(out, llm.Model{ID: n})
	}
	return out
}

// wantField checks that err is a field error on field.
func wantField(t *testing.T, err error, field string) {
	t.Helper()
	fe, ok := fault.As(err)
	if !ok || fe.Kind != fault.Invalid || fe.Field != field {
		t.Fatalf("err = %v, want a field error on %q", err, field)
	}
}

func TestEfforts(t *testing.T) {
	for _, e := range Efforts() {
		if !ValidEffort(e) {
			t.Errorf("%q listed but not valid", e)
		}
	}
	for _, e := range []string{"", "none", "default", "High"} {
		if ValidEffort(e) {
			t.Errorf("%q accepted", e)
		}
	}
	if Efforts()[len(Efforts())-1] != EffortOff {
		t.Error("off is not last")
	}
}

func TestNotFound(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	_, err := e.s.GetConnection(ctx, "nope")
	if !errors.Is(err, ErrNoConnection) {
		t.Fatalf("GetConnection: %v", err)
	}
	_, err = e.s.GetModel(ctx, "nope")
	if !errors.Is(err, ErrNoModel) {
		t.Fatalf("GetModel: %v", err)
	}
	for name, err := range map[string]error{
		"delete connection": e.s.DeleteConnection(ctx, "nope"),
		"enable connection": e.s.SetConnectionEnabled(ctx, "nope", true),
		"pin":               e.s.SetPinned(ctx, "nope", true),
		"default":           e.s.SetDefault(ctx, "nope"),
		"groups":            e.s.SetGroups(ctx, "nope", nil),
		"move":              e.s.Move(ctx, "nope", Up),
		"delete model":      e.s.DeleteModel(ctx, "nope"),
	} {
		if fault.KindOf(err) != fault.NotFound {
			t.Errorf("%s: %v, want not found", name, err)
		}
	}
	if _, err := e.s.Test(ctx, "nope"); !errors.Is(err, ErrNoConnection) {
		t.Errorf("Test: %v", err)
	}
}
