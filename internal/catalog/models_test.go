package catalog

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"lembas/internal/fault"
	"lembas/internal/llm"
)

// seed makes one connection with the named models and returns their ids
// by name.
func (e *env) seed(t *testing.T, names ...string) map[string]string {
	t.Helper()
	c := e.conn(t, "Local", "http://localhost:11434/v1")
	e.lister.set(c.BaseURL, named(names...)...)
	e.discover(t, c.ID)
	ids := map[string]string{}
	for n, m := range e.models(t) {
		ids[n] = m.ID
	}
	return ids
}

func TestUpdateModelValidationNamesFields(t *testing.T) {
	e := newEnv(t)
	id := e.seed(t, "m")["m"]
	for _, tc := range []struct {
		field string
		form  ModelForm
	}{
		{"display_name", ModelForm{DisplayName: strings.Repeat("x", MaxDisplayName+1)}},
		{"display_name", ModelForm{DisplayName: "two\nlines"}},
		{"description", ModelForm{Description: strings.Repeat("x", MaxDescription+1)}},
		{"system_prompt", ModelForm{SystemPrompt: strings.Repeat("x", MaxSystemPrompt+1)}},
		{"context_length", ModelForm{ContextLength: "-1"}},
		{"context_length", ModelForm{ContextLength: "lots"}},
		{"context_length", ModelForm{ContextLength: "1e6"}},
		{"temperature", ModelForm{Temperature: "2.01"}},
		{"temperature", ModelForm{Temperature: "-0.1"}},
		{"temperature", ModelForm{Temperature: "NaN"}},
		{"temperature", ModelForm{Temperature: "warm"}},
		{"top_p", ModelForm{TopP: "1.5"}},
		{"top_p", ModelForm{TopP: "-1"}},
		{"max_tokens", ModelForm{MaxTokens: "0"}},
		{"max_tokens", ModelForm{MaxTokens: "1000001"}},
		{"max_tokens", ModelForm{MaxTokens: "12.5"}},
		{"effort", ModelForm{Effort: "default"}},
		{"effort", ModelForm{Effort: "none"}},
	} {
		t.Run(tc.field+" "+fmt.Sprint(tc.form), func(t *testing.T) {
			_, err := e.s.UpdateModel(context.Background(), id, tc.form)
			wantField(t, err, tc.field)
		})
	}
	// Boundaries are accepted.
	m, err := e.s.UpdateModel(context.Background(), id, ModelForm{
		DisplayName: strings.Repeat("x", MaxDisplayName), Description: strings.Repeat("d", MaxDescription),
		SystemPrompt: strings.Repeat("p", MaxSystemPrompt), ContextLength: "0", Temperature: "2", TopP: "0",
		MaxTokens: "1000000", Effort: " Medium ",
	})
	if err != nil {
		t.Fatal(err)
	}
	if *m.Temperature != 2 || *m.TopP != 0 || *m.MaxTokens != 1000000 || m.Effort != "medium" {
		t.Fatalf("%+v", m)
	}
	if _, err := e.s.UpdateModel(context.Background(), "nope", ModelForm{}); fault.KindOf(err) != fault.NotFound {
		t.Fatalf("%v", err)
	}
}

// NULL means no default; "off" is a default of no reasoning. An empty
// form value must never be stored as ”.
func TestEffortNullIsNotOff(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id := e.seed(t, "m")["m"]
	stored := func() (string, bool) {
		var v *string
		if err := e.db.R.QueryRow(`SELECT effort FROM models WHERE id = ?`, id).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v == nil {
			return "", true
		}
		return *v, false
	}
	if v, null := stored(); !null {
		t.Fatalf("a new model has effort %q, want NULL", v)
	}
	for _, tc := range []struct {
		in       string
		want     string
		wantNull bool
	}{{"off", "off", false}, {"", "", true}, {"low", "low", false}, {"  ", "", true}} {
		m, err := e.s.UpdateModel(ctx, id, ModelForm{Effort: tc.in})
		if err != nil {
			t.Fatal(err)
		}
		v, null := stored()
		if v != tc.want || null != tc.wantNull || m.Effort != tc.want {
			t.Fatalf("%q stored as %q (null %v), view %q", tc.in, v, null, m.Effort)
		}
	}
	// Sampling defaults likewise: empty is NULL, and 0 is a value.
	m, err := e.s.UpdateModel(ctx, id, ModelForm{Temperature: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Temperature == nil || *m.Temperature != 0 || m.TopP != nil || m.MaxTokens != nil {
		t.Fatalf("%+v", m)
	}
	// The form round-trips.
	m, err = e.s.UpdateModel(ctx, id, ModelForm{DisplayName: "D", ContextLength: "8192", Temperature: "0.25",
		TopP: "0.9", MaxTokens: "512", Effort: "off", SystemPrompt: "S", Caps: Caps{Tools: true}})
	if err != nil {
		t.Fatal(err)
	}
	f := FormOf(m)
	want := ModelForm{DisplayName: "D", ContextLength: "8192", Temperature: "0.25", TopP: "0.9", MaxTokens: "512",
		Effort: "off", SystemPrompt: "S", Caps: Caps{Tools: true}}
	if f != want {
		t.Fatalf("FormOf = %+v", f)
	}
	if got := ParseModelForm(map[string][]string{"display_name": {"D"}, "context_length": {"8192"},
		"temperature": {"0.25"}, "top_p": {"0.9"}, "max_tokens": {"512"}, "effort": {"off"},
		"system_prompt": {"S"}, "tools": {"on"}}); got != want {
		t.Fatalf("ParseModelForm = %+v", got)
	}
}

func TestDefaultIsUnique(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ids := e.seed(t, "a", "b", "c")
	defaults := func() []string {
		var out []string
		for n, m := range e.models(t) {
			if m.IsDefault {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	must(t, e.s.SetDefault(ctx, ids["a"]))
	must(t, e.s.SetDefault(ctx, ids["b"]))
	if got := defaults(); !reflect.DeepEqual(got, []string{"b"}) {
		t.Fatalf("defaults %v", got)
	}
	must(t, e.s.SetDefault(ctx, ids["b"])) // again: still one
	if got := defaults(); !reflect.DeepEqual(got, []string{"b"}) {
		t.Fatalf("defaults %v", got)
	}
	// The index holds even against SQL that bypasses SetDefault.
	if _, err := e.db.W.Exec(`UPDATE models SET is_default = 1 WHERE id = ?`, ids["c"]); err == nil {
		t.Fatal("a second default was stored")
	}
	// Concurrent SetDefault calls leave exactly one.
	var wg sync.WaitGroup
	for range 20 {
		for _, id := range ids {
			wg.Go(func() { must(t, e.s.SetDefault(ctx, id)) })
		}
	}
	wg.Wait()
	if got := defaults(); len(got) != 1 {
		t.Fatalf("defaults %v", got)
	}
	must(t, e.s.SetDefault(ctx, ""))
	if got := defaults(); len(got) != 0 {
		t.Fatalf("defaults after clearing %v", got)
	}
}

func TestMove(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ids := e.seed(t, "a", "b", "c", "d")
	for _, tc := range []struct {
		do   func() error
		want string
	}{
		{func() error { return e.s.Move(ctx, ids["c"], Up) }, "a c b d"},
		{func() error { return e.s.Move(ctx, ids["a"], Up) }, "a c b d"}, // already first
		{func() error { return e.s.Move(ctx, ids["a"], Down) }, "c a b d"},
		{func() error { return e.s.Move(ctx, ids["d"], Top) }, "d c a b"},
		{func() error { return e.s.Move(ctx, ids["d"], Bottom) }, "c a b d"},
		{func() error { return e.s.MoveTo(ctx, ids["b"], 0) }, "b c a d"},
		{func() error { return e.s.MoveTo(ctx, ids["b"], 99) }, "c a d b"},
		{func() error { return e.s.MoveTo(ctx, ids["a"], -5) }, "a c d b"},
		{func() error { return e.s.Reorder(ctx, []string{ids["b"], ids["a"]}) }, "b c d a"}, // a subset swaps among its own places
		{func() error { return e.s.Reorder(ctx, []string{ids["d"], "gone", ids["c"]}) }, "b d c a"},
	} {
		must(t, tc.do())
		if got := strings.Join(e.order(t), " "); got != tc.want {
			t.Fatalf("order %q, want %q", got, tc.want)
		}
	}
	wantField(t, e.s.Reorder(ctx, []string{ids["a"], ids["a"]}), "order")
	// Pinning never changes the order.
	must(t, e.s.SetPinned(ctx, ids["a"], true))
	if got := strings.Join(e.order(t), " "); got != "b d c a" {
		t.Fatalf("pinning moved a model: %q", got)
	}
}

// Concurrent reorders and moves leave a dense permutation of every model.
func TestReorderRace(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var names []string
	for i := range 40 {
		names = append(names, fmt.Sprintf("m%02d", i))
	}
	byName := e.seed(t, names...)
	var all []string
	for _, id := range byName {
		all = append(all, id)
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 10 {
				ids := slices.Clone(all)
				r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
				switch r.IntN(3) {
				case 0:
					must(t, e.s.Reorder(ctx, ids))
				case 1:
					must(t, e.s.Reorder(ctx, ids[:r.IntN(len(ids))]))
				default:
					must(t, e.s.MoveTo(ctx, ids[0], r.IntN(len(ids))))
				}
			}
		})
	}
	wg.Wait()
	got := e.order(t) // fails unless positions are exactly 0..n-1
	slices.Sort(got)
	if !reflect.DeepEqual(got, names) {
		t.Fatalf("models lost or duplicated: %v", got)
	}
}

func TestListModelsFilters(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	one := e.conn(t, "One", "http://one/v1")
	two := e.conn(t, "Two", "http://two/v1")
	e.lister.set(one.BaseURL,
		llm.Model{ID: "llama-3-8b", Vision: ptr(true)},
		llm.Model{ID: "qwen_coder", Tools: ptr(true)},
		llm.Model{ID: "nomic-embed", Embedding: ptr(true)},
		llm.Model{ID: "gone"},
	)
	e.lister.set(two.BaseURL, llm.Model{ID: "gpt-x", Reasoning: ptr(true), Tools: ptr(true)})
	e.discover(t, one.ID)
	e.discover(t, two.ID)
	e.lister.set(one.BaseURL, named("llama-3-8b", "qwen_coder", "nomic-embed")...)
	e.discover(t, one.ID) // keeps caps: nothing stated this time
	ms := e.models(t)
	must(t, e.s.SetHidden(ctx, ms["qwen_coder"].ID, true))
	must(t, e.s.SetEnabled(ctx, ms["nomic-embed"].ID, false))
	if _, err := e.s.UpdateModel(ctx, ms["gpt-x"].ID, ModelForm{DisplayName: "Thinker", Description: "100% sure",
		Caps: ms["gpt-x"].Caps}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		f    Filter
		want string
	}{
		{Filter{}, "llama-3-8b qwen_coder nomic-embed gone gpt-x"},
		{Filter{Tab: TabEnabled}, "llama-3-8b qwen_coder gpt-x"},
		{Filter{Tab: TabHidden}, "qwen_coder"},
		{Filter{Tab: TabDisabled}, "nomic-embed"},
		{Filter{Tab: TabUnavailable}, "gone"},
		{Filter{ConnectionID: two.ID}, "gpt-x"},
		{Filter{Capability: "tools"}, "qwen_coder gpt-x"},
		{Filter{Capability: "vision"}, "llama-3-8b"},
		{Filter{Capability: "embedding"}, "nomic-embed"},
		{Filter{Query: "LLAMA"}, "llama-3-8b"},
		{Filter{Query: "thinker"}, "gpt-x"},
		{Filter{Query: "100%"}, "gpt-x"},
		{Filter{Query: "_"}, "qwen_coder"}, // literal, not a wildcard
		{Filter{Query: "%"}, "gpt-x"},
		{Filter{Tab: TabEnabled, Capability: "tools", ConnectionID: one.ID}, "qwen_coder"},
		{Filter{Limit: 2}, "llama-3-8b qwen_coder"},
		{Filter{Limit: 2, Offset: 4}, "gpt-x"},
		{Filter{Limit: 2, Offset: 10}, ""},
	} {
		got, total, err := e.s.ListModels(ctx, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, m := range got {
			names = append(names, m.UpstreamName)
		}
		if strings.Join(names, " ") != tc.want {
			t.Errorf("%+v: %v, want %s", tc.f, names, tc.want)
		}
		if tc.f.Limit == 0 && total != len(names) {
			t.Errorf("%+v: total %d for %d rows", tc.f, total, len(names))
		}
		if tc.f.Limit == 2 && total != 5 {
			t.Errorf("%+v: total %d, want 5", tc.f, total)
		}
	}
	_, _, err := e.s.ListModels(ctx, Filter{Tab: "weird"})
	wantField(t, err, "tab")
	_, _, err = e.s.ListModels(ctx, Filter{Capability: "m.id = m.id OR 1"})
	wantField(t, err, "capability")
}

// The admin list is one query per page with 500 models.
func TestListModelsFiveHundred(t *testing.T) {
	e := newEnv(t)
	var names []string
	for i := range 500 {
		names = append(names, fmt.Sprintf("model-%03d", i))
	}
	e.seed(t, names...)
	got, total, err := e.s.ListModels(context.Background(), Filter{Query: "model-4", Limit: 50, Offset: 50})
	if err != nil {
		t.Fatal(err)
	}
	if total != 100 || len(got) != 50 || got[0].UpstreamName != "model-450" {
		t.Fatalf("total %d, %d rows, first %s", total, len(got), got[0].UpstreamName)
	}
	// The picker's and the list's order use the index rather than a sort.
	rows, err := e.db.R.Query(`EXPLAIN QUERY PLAN SELECT id FROM models m ORDER BY m.position`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		rows.Scan(&id, &parent, &unused, &detail)
		plan.WriteString(detail + "\n")
	}
	if !strings.Contains(plan.String(), "models_position") {
		t.Fatalf("plan:\n%s", plan.String())
	}
}

func TestBulk(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ids := e.seed(t, "a", "b", "c")
	n, err := e.s.Bulk(ctx, []string{ids["a"], ids["b"], "gone"}, BulkDisable)
	if err != nil || n != 2 {
		t.Fatalf("%d, %v", n, err)
	}
	n, err = e.s.Bulk(ctx, []string{ids["b"], ids["c"]}, BulkHide)
	if err != nil || n != 2 {
		t.Fatalf("%d, %v", n, err)
	}
	ms := e.models(t)
	if ms["a"].Enabled || ms["b"].Enabled || !ms["c"].Enabled || ms["a"].Hidden || !ms["b"].Hidden || !ms["c"].Hidden {
		t.Fatalf("%+v", ms)
	}
	if _, err := e.s.Bulk(ctx, []string{ids["a"]}, BulkEnable); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Bulk(ctx, []string{ids["b"]}, BulkShow); err != nil {
		t.Fatal(err)
	}
	ms = e.models(t)
	if !ms["a"].Enabled || ms["b"].Hidden {
		t.Fatalf("%+v", ms)
	}
	if n, err := e.s.Bulk(ctx, nil, BulkEnable); n != 0 || err != nil {
		t.Fatalf("%d %v", n, err)
	}
	_, err = e.s.Bulk(ctx, []string{ids["a"]}, "delete")
	wantField(t, err, "action")
}

func TestSetGroups(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id := e.seed(t, "m")["m"]
	g1, err := e.auth.CreateGroup(ctx, "Staff", "")
	if err != nil {
		t.Fatal(err)
	}
	g2, err := e.auth.CreateGroup(ctx, "Friends", "")
	if err != nil {
		t.Fatal(err)
	}
	must(t, e.s.SetGroups(ctx, id, []string{g1.ID, g2.ID, g1.ID}))
	m, _ := e.s.GetModel(ctx, id)
	want := []string{g1.ID, g2.ID}
	slices.Sort(want)
	if !m.Restricted || !reflect.DeepEqual(m.GroupIDs, want) {
		t.Fatalf("%+v", m)
	}
	wantField(t, e.s.SetGroups(ctx, id, []string{g1.ID, "no-such-group"}), "groups")
	if m, _ := e.s.GetModel(ctx, id); len(m.GroupIDs) != 2 {
		t.Fatalf("a refused change half-applied: %v", m.GroupIDs)
	}
	// Deleting a group removes it from the model.
	must(t, e.auth.DeleteGroup(ctx, g1.ID))
	if m, _ := e.s.GetModel(ctx, id); !reflect.DeepEqual(m.GroupIDs, []string{g2.ID}) {
		t.Fatalf("%v", m.GroupIDs)
	}
	must(t, e.s.SetGroups(ctx, id, nil))
	if m, _ := e.s.GetModel(ctx, id); m.Restricted || m.GroupIDs != nil {
		t.Fatalf("%+v", m)
	}
}

func TestDeleteModel(t *testing.T) {
	e := newEnv(t)
	ids := e.seed(t, "a", "b", "c")
	must(t, e.s.DeleteModel(context.Background(), ids["b"]))
	if got := e.order(t); !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Fatalf("%v", got)
	}
}

func TestEndpointFor(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c, err := e.s.CreateConnection(ctx, ConnectionForm{Name: "A", BaseURL: "http://h/v1", APIKey: "sk-123"})
	if err != nil {
		t.Fatal(err)
	}
	e.lister.set(c.BaseURL, named("m")...)
	e.discover(t, c.ID)
	ep, m, err := e.s.EndpointFor(ctx, e.models(t)["m"].ID)
	if err != nil || ep.APIKey != "sk-123" || ep.BaseURL != "http://h/v1" || m.UpstreamName != "m" {
		t.Fatalf("%+v %+v %v", ep, m, err)
	}
}
