package catalog

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"lembas/internal/llm"
)

func TestDiscoverAddsModelsAsStated(t *testing.T) {
	e := newEnv(t)
	c := e.conn(t, "Router", "https://router.example/api/v1")
	e.lister.set(c.BaseURL,
		llm.Model{ID: "plain"},
		llm.Model{ID: "seer", ContextLength: 128000, Vision: ptr(true), Tools: ptr(false), OwnedBy: "acme",
			Description: "Sees things.", PromptPrice: "0.000001", CompletionPrice: "0.000002"},
		llm.Model{ID: "embed", Embedding: ptr(true)},
		llm.Model{ID: "plain"}, // a duplicate entry is one model
		llm.Model{ID: "  "},    // a blank name is nothing
	)
	res := e.discover(t, c.ID)
	if res.Added != 3 || res.Updated != 0 || res.Missing != 0 {
		t.Fatalf("result %+v", res)
	}
	if got := e.order(t); !reflect.DeepEqual(got, []string{"plain", "seer", "embed"}) {
		t.Fatalf("order %v", got)
	}
	ms := e.models(t)
	p, s := ms["plain"], ms["seer"]
	if !p.Enabled || !p.Available || p.Hidden || p.Pinned || p.Caps != (Caps{}) || p.CapsSource != SourceNone ||
		p.ContextLength != 0 || p.ContextLengthSource != SourceNone {
		t.Fatalf("plain: nothing stated, nothing guessed: %+v", p)
	}
	if s.Caps != (Caps{Vision: true}) || s.CapsSource != SourceUpstream || s.ContextLength != 128000 ||
		s.ContextLengthSource != SourceUpstream || s.OwnedBy != "acme" || s.UpstreamDescription != "Sees things." ||
		s.PromptPrice != "0.000001" || s.CompletionPrice != "0.000002" || s.Description != "" {
		t.Fatalf("seer: %+v", s)
	}
	if !ms["embed"].Caps.Embedding {
		t.Fatal("embedding not recorded")
	}
	cv, _ := e.s.GetConnection(context.Background(), c.ID)
	if cv.LastStatus != "ok" || cv.LastError != "" || cv.LastCheckedAt.IsZero() || cv.ModelCount != 3 {
		t.Fatalf("connection %+v", cv)
	}
}

// The upsert keeps every administrator choice and refreshes what the
// server says; models the server dropped are kept, marked unavailable.
func TestDiscoverKeepsAdminChoices(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.conn(t, "Local", "http://localhost:11434/v1")
	e.lister.set(c.BaseURL,
		llm.Model{ID: "a", ContextLength: 4096, Vision: ptr(false)},
		llm.Model{ID: "b", ContextLength: 8192},
		llm.Model{ID: "c"},
		llm.Model{ID: "d", ContextLength: 1000},
	)
	e.discover(t, c.ID)
	ms := e.models(t)
	a, b := ms["a"], ms["b"]

	// The administrator edits a: their display name, caps and context length.
	_, err := e.s.UpdateModel(ctx, a.ID, ModelForm{DisplayName: "Alpha", Description: "Mine.", ContextLength: "32000",
		Temperature: "0.7", Effort: "high", SystemPrompt: "Be brief.", Caps: Caps{Vision: true, Tools: true}})
	if err != nil {
		t.Fatal(err)
	}
	// d's context length is cleared by the administrator: discovery may
	// fill it again.
	if _, err := e.s.UpdateModel(ctx, ms["d"].ID, ModelForm{ContextLength: ""}); err != nil {
		t.Fatal(err)
	}
	must(t, e.s.SetPinned(ctx, a.ID, true))
	must(t, e.s.SetHidden(ctx, b.ID, true))
	must(t, e.s.SetEnabled(ctx, ms["c"].ID, false))
	must(t, e.s.SetDefault(ctx, b.ID))
	must(t, e.s.MoveTo(ctx, ms["d"].ID, 0))
	before := e.order(t)

	// Upstream now: a says other caps and context; b changes context and
	// owner; c is gone; d states a context; e is new.
	e.lister.set(c.BaseURL,
		llm.Model{ID: "e", ContextLength: 2048},
		llm.Model{ID: "d", ContextLength: 3000},
		llm.Model{ID: "b", ContextLength: 16384, OwnedBy: "library"},
		llm.Model{ID: "a", ContextLength: 65536, Vision: ptr(false), Tools: ptr(false), Reasoning: ptr(true)},
	)
	res := e.discover(t, c.ID)
	if res.Added != 1 || res.Missing != 1 || res.Updated != 2 { // b (facts) and d (context); a's admin facts stand
		t.Fatalf("result %+v", res)
	}
	ms = e.models(t)
	a2, b2, c2, d2, e2 := ms["a"], ms["b"], ms["c"], ms["d"], ms["e"]
	if a2.DisplayName != "Alpha" || a2.Description != "Mine." || a2.ContextLength != 32000 ||
		a2.ContextLengthSource != SourceAdmin || a2.Caps != (Caps{Vision: true, Tools: true}) ||
		a2.CapsSource != SourceAdmin || !a2.Pinned || *a2.Temperature != 0.7 || a2.Effort != "high" ||
		a2.SystemPrompt != "Be brief." {
		t.Fatalf("a lost an administrator choice: %+v", a2)
	}
	if !b2.Hidden || !b2.IsDefault || b2.ContextLength != 16384 || b2.OwnedBy != "library" {
		t.Fatalf("b: %+v", b2)
	}
	if c2.Available || c2.Enabled || c2.ID != ms["c"].ID {
		t.Fatalf("c should be kept, unavailable and still disabled: %+v", c2)
	}
	if d2.ContextLength != 3000 || d2.ContextLengthSource != SourceUpstream {
		t.Fatalf("d: %+v", d2)
	}
	if !e2.Enabled || !e2.Available || e2.ContextLength != 2048 {
		t.Fatalf("e: %+v", e2)
	}
	if got := e.order(t); !reflect.DeepEqual(got, append(before, "e")) {
		t.Fatalf("order %v, want %v then e", got, before)
	}

	// c comes back: available again, still disabled, same row.
	e.lister.set(c.BaseURL, named("a", "b", "c", "d", "e")...)
	res = e.discover(t, c.ID)
	if res.Added != 0 || res.Missing != 0 {
		t.Fatalf("result %+v", res)
	}
	if c3 := e.models(t)["c"]; !c3.Available || c3.Enabled || c3.Position != c2.Position {
		t.Fatalf("c came back as %+v", c3)
	}
	// Nothing changed upstream: nothing updated.
	if res := e.discover(t, c.ID); res.Updated != 0 || res.Added != 0 {
		t.Fatalf("idle rediscovery %+v", res)
	}
}

func TestDiscoverAppendsAcrossConnections(t *testing.T) {
	e := newEnv(t)
	one := e.conn(t, "One", "http://one/v1")
	two := e.conn(t, "Two", "http://two/v1")
	e.lister.set(one.BaseURL, named("x", "y")...)
	e.lister.set(two.BaseURL, named("z", "x2")...)
	e.discover(t, one.ID)
	e.discover(t, two.ID)
	e.lister.set(one.BaseURL, named("x", "y", "w")...)
	e.discover(t, one.ID)
	if got := e.order(t); !reflect.DeepEqual(got, []string{"x", "y", "z", "x2", "w"}) {
		t.Fatalf("order %v", got)
	}
	// Deleting a connection closes its models' gap in the order.
	must(t, e.s.DeleteConnection(context.Background(), two.ID))
	if got := e.order(t); !reflect.DeepEqual(got, []string{"x", "y", "w"}) {
		t.Fatalf("order %v", got)
	}
}

func TestDiscoverFailureChangesOnlyStatus(t *testing.T) {
	e := newEnv(t)
	c := e.conn(t, "Local", "http://localhost:11434/v1")
	e.lister.set(c.BaseURL, named("a", "b")...)
	e.discover(t, c.ID)
	before := e.models(t)
	e.lister.err = errors.New("could not connect to http://localhost:11434/v1: connection refused")
	res, err := e.s.Discover(context.Background(), c.ID)
	if err != nil || res.Err == nil {
		t.Fatalf("%+v, %v", res, err)
	}
	if after := e.models(t); !reflect.DeepEqual(after, before) {
		t.Fatal("a failed discovery changed models")
	}
	cv, _ := e.s.GetConnection(context.Background(), c.ID)
	if cv.LastStatus != "error" || !strings.Contains(cv.LastError, "connection refused") {
		t.Fatalf("status %q %q", cv.LastStatus, cv.LastError)
	}
	// The next success clears the error.
	e.lister.err = nil
	e.discover(t, c.ID)
	cv, _ = e.s.GetConnection(context.Background(), c.ID)
	if cv.LastStatus != "ok" || cv.LastError != "" {
		t.Fatalf("status %q %q", cv.LastStatus, cv.LastError)
	}
}

func TestTestStoresNoModels(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c, err := e.s.CreateConnection(ctx, ConnectionForm{Name: "A", BaseURL: "http://h/v1", APIKey: "sk-abc",
		Headers: "X-Title: T", Timeout: "7"})
	if err != nil {
		t.Fatal(err)
	}
	e.lister.set(c.BaseURL, named("a", "b", "c")...)
	res, err := e.s.Test(ctx, c.ID)
	if err != nil || res.Err != nil || res.Count != 3 {
		t.Fatalf("%+v, %v", res, err)
	}
	if n := len(e.models(t)); n != 0 {
		t.Fatalf("Test stored %d models", n)
	}
	ep := e.lister.lastEp
	if ep.APIKey != "sk-abc" || ep.Headers["X-Title"] != "T" || ep.Timeout != 7*time.Second || ep.BaseURL != "http://h/v1" {
		t.Fatalf("endpoint %+v", ep)
	}
	cv, _ := e.s.GetConnection(ctx, c.ID)
	if cv.LastStatus != "ok" || cv.UpdatedAt != c.UpdatedAt {
		t.Fatalf("status %q; updated_at moved: %v → %v", cv.LastStatus, c.UpdatedAt, cv.UpdatedAt)
	}
}

// A stalled server cannot hold a discovery past the connection's timeout.
func TestDiscoverBoundedByTimeout(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c, err := e.s.CreateConnection(ctx, ConnectionForm{Name: "Slow", BaseURL: "http://slow/v1", Timeout: "1"})
	if err != nil {
		t.Fatal(err)
	}
	e.lister.block = true
	start := time.Now()
	res, err := e.s.Discover(ctx, c.ID)
	took := time.Since(start)
	if err != nil || !errors.Is(res.Err, context.DeadlineExceeded) {
		t.Fatalf("%+v, %v", res, err)
	}
	if took > 3*time.Second {
		t.Fatalf("discovery took %v against a 1 s timeout", took)
	}
	if e.lister.calls != 1 {
		t.Fatalf("%d calls: the timeout bounds one attempt, not several", e.lister.calls)
	}
	cv, _ := e.s.GetConnection(ctx, c.ID)
	if cv.LastStatus != "error" || cv.LastError != "The server did not answer within 1 second." || cv.LastDuration < 900*time.Millisecond {
		t.Fatalf("status %q %q %v", cv.LastStatus, cv.LastError, cv.LastDuration)
	}
}

func TestRefreshAll(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var ids []string
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		c := e.conn(t, n, "http://"+n+"/v1")
		e.lister.set(c.BaseURL, named(n+"-1", n+"-2")...)
		ids = append(ids, c.ID)
	}
	must(t, e.s.SetConnectionEnabled(ctx, ids[5], false))
	if err := e.s.RefreshAll(ctx); err != nil {
		t.Fatal(err)
	}
	ms := e.models(t)
	if len(ms) != 10 {
		t.Fatalf("%d models, want 10 (the disabled connection is skipped)", len(ms))
	}
	if _, ok := ms["f-1"]; ok {
		t.Fatal("a disabled connection was refreshed")
	}
	e.order(t) // dense despite concurrent discoveries
}

func TestDiscoverWithoutLister(t *testing.T) {
	e := newEnv(t)
	c := e.conn(t, "A", "http://a/v1")
	s := New(e.db, e.s.box, Options{})
	if _, err := s.Discover(context.Background(), c.ID); !errors.Is(err, ErrNoLister) {
		t.Fatalf("%v", err)
	}
}

func TestErrorSentence(t *testing.T) {
	long := strings.Repeat("word ", 200)
	got := errorSentence(errors.New(long), time.Second)
	if len([]rune(got)) != maxErrorSentence || !strings.HasSuffix(got, "…") {
		t.Fatalf("%d runes", len([]rune(got)))
	}
	if got := errorSentence(errors.New("a\n  b"), time.Second); got != "a b" {
		t.Fatalf("%q", got)
	}
	if got := errorSentence(context.DeadlineExceeded, 30*time.Second); got != "The server did not answer within 30 seconds." {
		t.Fatalf("%q", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
