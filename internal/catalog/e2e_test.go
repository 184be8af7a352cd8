package catalog

import (
	"context"
	"strings"
	"testing"
	"time"

	"lembas/internal/llm"
	"lembas/internal/llm/llmtest"
)

var _ Lister = (*llm.Client)(nil)

// Discovery through the real client against the fake server: what each
// shape states arrives, what it does not stays unknown, the key and the
// headers are sent, and the catalog keeps its rules.
func TestDiscoverEndToEnd(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.RequireKey("sk-e2e-key-000111")
	e := newEnv(t)
	e.s = New(e.db, e.s.box, Options{Lister: llm.New(llm.Options{}), FilesDir: e.filesDir})
	ctx := context.Background()
	c, err := e.s.CreateConnection(ctx, ConnectionForm{Name: "Router", BaseURL: srv.URL + "/models",
		APIKey: "sk-e2e-key-000111", Headers: "X-Title: LLeMbas", Timeout: "5"})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetModels(llmtest.ShapeOpenRouter,
		llmtest.ModelSpec{ID: "acme/seer", Name: "Seer", Description: "Sees.", ContextLength: 131072,
			Vision: true, Tools: true, PromptPrice: "0.0000005", CompletionPrice: "0.0000015"},
		llmtest.ModelSpec{ID: "acme/thinker", ContextLength: 65536, Reasoning: true},
		llmtest.ModelSpec{ID: "acme/embed", Embedding: true},
	)
	res := e.discover(t, c.ID)
	if res.Added != 3 {
		t.Fatalf("%+v", res)
	}
	req := srv.LastRequest()
	if req.Path != "/v1/models" || req.Header.Get("X-Title") != "LLeMbas" {
		t.Fatalf("request %s %v", req.Path, req.Header)
	}
	ms := e.models(t)
	seer, thinker := ms["acme/seer"], ms["acme/thinker"]
	if !seer.Caps.Vision || !seer.Caps.Tools || seer.ContextLength != 131072 || seer.PromptPrice != "0.0000005" ||
		seer.UpstreamDescription != "Sees." || seer.DisplayName != "" {
		t.Fatalf("seer %+v", seer)
	}
	if !thinker.Caps.Reasoning || thinker.Caps.Vision || thinker.ContextLength != 65536 {
		t.Fatalf("thinker %+v", thinker)
	}
	if !ms["acme/embed"].Caps.Embedding {
		t.Fatalf("embed %+v", ms["acme/embed"])
	}

	// An administrator's context length survives; a dropped model is kept.
	if _, err := e.s.UpdateModel(ctx, seer.ID, ModelForm{ContextLength: "8192", Caps: seer.Caps}); err != nil {
		t.Fatal(err)
	}
	srv.SetModels(llmtest.ShapeOpenRouter,
		llmtest.ModelSpec{ID: "acme/seer", ContextLength: 200000, Vision: true, Tools: true},
		llmtest.ModelSpec{ID: "acme/embed", Embedding: true},
	)
	res = e.discover(t, c.ID)
	if res.Missing != 1 {
		t.Fatalf("%+v", res)
	}
	ms = e.models(t)
	if ms["acme/seer"].ContextLength != 8192 || ms["acme/thinker"].Available {
		t.Fatalf("seer %d, thinker available %v", ms["acme/seer"].ContextLength, ms["acme/thinker"].Available)
	}

	// A server that says nothing about context leaves it unknown.
	srv.SetModels(llmtest.ShapeOllama, llmtest.ModelSpec{ID: "llama3:8b", ContextLength: 8192})
	e.discover(t, c.ID)
	if m := e.models(t)["llama3:8b"]; m.ContextLength != 0 || m.ContextLengthSource != SourceNone || m.Caps != (Caps{}) {
		t.Fatalf("guessed: %+v", m)
	}

	// A wrong key is a recorded sentence, not a Go error.
	if _, err := e.s.UpdateConnection(ctx, c.ID, ConnectionForm{Name: "Router", BaseURL: srv.URL,
		APIKey: "sk-wrong-key-999", Headers: "X-Title:", Timeout: "5"}); err != nil {
		t.Fatal(err)
	}
	tr, err := e.s.Test(ctx, c.ID)
	if err != nil || tr.Err == nil {
		t.Fatalf("%+v %v", tr, err)
	}
	cv, _ := e.s.GetConnection(ctx, c.ID)
	if cv.LastStatus != "error" || cv.LastError == "" || strings.Contains(cv.LastError, "sk-wrong-key-999") {
		t.Fatalf("status %q %q", cv.LastStatus, cv.LastError)
	}

	// A wedged server is given up on within the connection's timeout.
	srv.RequireKey("")
	srv.SetHang(true)
	if _, err := e.s.UpdateConnection(ctx, c.ID, ConnectionForm{Name: "Router", BaseURL: srv.URL,
		Headers: "X-Title:", Timeout: "1"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	dr, err := e.s.Discover(ctx, c.ID)
	if err != nil || dr.Err == nil {
		t.Fatalf("%+v %v", dr, err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("took %v against a 1 s timeout", took)
	}
	cv, _ = e.s.GetConnection(ctx, c.ID)
	t.Logf("recorded: %s", cv.LastError)
	if cv.LastStatus != "error" || cv.LastError == "" {
		t.Fatalf("status %q %q", cv.LastStatus, cv.LastError)
	}
}
