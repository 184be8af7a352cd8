package catalog

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"lembas/internal/auth"
	"lembas/internal/llm"
)

func pickerNames(t *testing.T, ps []PickerModel, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.UpstreamName)
	}
	return strings.Join(names, " ")
}

func TestAccess(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	one := e.conn(t, "One", "http://one/v1")
	two := e.conn(t, "Two", "http://two/v1")
	e.lister.set(one.BaseURL,
		llm.Model{ID: "open"},
		llm.Model{ID: "staff-only"},
		llm.Model{ID: "hidden"},
		llm.Model{ID: "embed", Embedding: ptr(true)},
		llm.Model{ID: "off"},
		llm.Model{ID: "vanishing"},
	)
	e.lister.set(two.BaseURL, named("elsewhere")...)
	e.discover(t, one.ID)
	e.discover(t, two.ID)
	e.lister.set(one.BaseURL, named("open", "staff-only", "hidden", "embed", "off")...)
	e.discover(t, one.ID) // "vanishing" is now unavailable
	ids := map[string]string{}
	for n, m := range e.models(t) {
		ids[n] = m.ID
	}
	must(t, e.s.SetHidden(ctx, ids["hidden"], true))
	must(t, e.s.SetEnabled(ctx, ids["off"], false))
	staff, err := e.auth.CreateGroup(ctx, "Staff", "")
	if err != nil {
		t.Fatal(err)
	}
	must(t, e.s.SetGroups(ctx, ids["staff-only"], []string{staff.ID}))
	admin := e.user(t, "admin", true)
	member := e.user(t, "member", false)
	outsider := e.user(t, "outsider", false)
	must(t, e.auth.AddMember(ctx, staff.ID, member.ID))

	for _, tc := range []struct {
		who  auth.User
		want string
	}{
		{admin, "open staff-only elsewhere"},
		{member, "open staff-only elsewhere"},
		{outsider, "open elsewhere"},
		{auth.User{}, ""},
		{auth.User{ID: member.ID, Disabled: true}, ""},
	} {
		ps, err := e.s.VisibleTo(ctx, tc.who)
		if got := pickerNames(t, ps, err); got != tc.want {
			t.Errorf("%s sees %q, want %q", tc.who.Username, got, tc.want)
		}
	}

	for _, tc := range []struct {
		who   auth.User
		model string
		want  bool
	}{
		{outsider, "open", true},
		{outsider, "staff-only", false},
		{member, "staff-only", true},
		{admin, "staff-only", true},
		{outsider, "hidden", true}, // hidden leaves the picker, not service
		{outsider, "embed", true},
		{outsider, "off", false},
		{admin, "off", false},
		{admin, "vanishing", false},
		{outsider, "no-such-model", false},
	} {
		id := ids[tc.model]
		if id == "" {
			id = tc.model
		}
		got, err := e.s.CanUse(ctx, tc.who, id)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("CanUse(%s, %s) = %v", tc.who.Username, tc.model, got)
		}
	}

	// A member who leaves the group loses the model.
	must(t, e.auth.RemoveMember(ctx, staff.ID, member.ID))
	ps, err := e.s.VisibleTo(ctx, member)
	if got := pickerNames(t, ps, err); got != "open elsewhere" {
		t.Errorf("after leaving: %q", got)
	}

	// A disabled connection takes its models out of every picker and out
	// of service.
	must(t, e.s.SetConnectionEnabled(ctx, two.ID, false))
	ps, err = e.s.VisibleTo(ctx, admin)
	if got := pickerNames(t, ps, err); got != "open staff-only" {
		t.Errorf("with Two disabled: %q", got)
	}
	if ok, _ := e.s.CanUse(ctx, admin, ids["elsewhere"]); ok {
		t.Error("a model on a disabled connection is usable")
	}
}

func TestPickerOrderAndPins(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ids := e.seed(t, "a", "b", "c", "d")
	u := e.user(t, "someone", false)
	must(t, e.s.SetPinned(ctx, ids["d"], true))
	must(t, e.s.SetPinned(ctx, ids["b"], true))
	must(t, e.s.MoveTo(ctx, ids["c"], 0))
	ps, err := e.s.VisibleTo(ctx, u)
	if got := pickerNames(t, ps, err); got != "c a b d" {
		t.Fatalf("picker %q: pinning must not reorder", got)
	}
	ps, err = e.s.Pinned(ctx, u)
	if got := pickerNames(t, ps, err); got != "b d" {
		t.Fatalf("pinned %q", got)
	}
	must(t, e.s.SetHidden(ctx, ids["b"], true))
	ps, err = e.s.Pinned(ctx, u)
	if got := pickerNames(t, ps, err); got != "d" {
		t.Fatalf("a hidden pinned model is still a shortcut: %q", got)
	}
}

func TestPickerModelCarriesWhatThePickerShows(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.conn(t, "Router", "http://r/v1")
	e.lister.set(c.BaseURL, llm.Model{ID: "org/model-7b", ContextLength: 32768, Vision: ptr(true), Tools: ptr(true)},
		llm.Model{ID: "bare"})
	e.discover(t, c.ID)
	ms := e.models(t)
	if _, err := e.s.UpdateModel(ctx, ms["org/model-7b"].ID, ModelForm{DisplayName: "Seven", Description: "Small.",
		ContextLength: "32768", Caps: ms["org/model-7b"].Caps}); err != nil {
		t.Fatal(err)
	}
	must(t, e.s.SetAvatar(ctx, ms["org/model-7b"].ID, pngReader(t, 10, 10)))
	ps, err := e.s.VisibleTo(ctx, e.user(t, "u", false))
	if err != nil {
		t.Fatal(err)
	}
	p, bare := ps[0], ps[1]
	if p.Name != "Seven" || p.UpstreamName != "org/model-7b" || p.Description != "Small." || p.ContextLength != 32768 ||
		p.ConnectionName != "Router" || !reflect.DeepEqual(p.Badges, []string{"vision", "tools"}) ||
		!strings.HasPrefix(p.AvatarURL, "/models/"+p.ID+"/avatar?v=") {
		t.Fatalf("%+v", p)
	}
	if bare.Name != "bare" || bare.AvatarURL != "" || bare.ContextLength != 0 || bare.Badges != nil {
		t.Fatalf("%+v", bare)
	}
	m, _ := e.s.GetModel(ctx, p.ID)
	if m.AvatarURL() != p.AvatarURL {
		t.Fatalf("%q vs %q", m.AvatarURL(), p.AvatarURL)
	}
}

func TestDefault(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	u := e.user(t, "u", false)
	if _, ok, err := e.s.Default(ctx, u); ok || err != nil {
		t.Fatalf("no models: %v %v", ok, err)
	}
	ids := e.seed(t, "a", "b", "c", "d")
	staff, err := e.auth.CreateGroup(ctx, "Staff", "")
	if err != nil {
		t.Fatal(err)
	}
	check := func(u auth.User, want string) {
		t.Helper()
		p, ok, err := e.s.Default(ctx, u)
		if err != nil || !ok || p.UpstreamName != want {
			t.Fatalf("default %q (%v, %v), want %s", p.UpstreamName, ok, err, want)
		}
	}
	check(u, "a") // first visible
	must(t, e.s.SetDefault(ctx, ids["c"]))
	check(u, "c") // instance default
	u.DefaultModelID = ids["b"]
	check(u, "b") // their own
	must(t, e.s.SetHidden(ctx, ids["b"], true))
	check(u, "c") // theirs is no longer in the picker
	must(t, e.s.SetGroups(ctx, ids["c"], []string{staff.ID}))
	check(u, "a") // the instance default is not theirs to use
	u.DefaultModelID = "deleted-long-ago"
	check(u, "a")
	must(t, e.s.SetDefault(ctx, ""))
	must(t, e.s.SetEnabled(ctx, ids["a"], false))
	check(u, "d")
}
