package auth

import (
	"context"
	"errors"
	"slices"
	"testing"

	"lembas/internal/fault"
)

// mustUser creates an account the way an administrator does.
func mustUser(t *testing.T, s *Service, name string, admin bool) User {
	t.Helper()
	u, err := s.CreateUser(context.Background(), name, "long enough password", admin)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return u
}

// mustGroup creates a group granting keys, with members in it.
func mustGroup(t *testing.T, s *Service, name string, keys []string, members ...User) Group {
	t.Helper()
	ctx := context.Background()
	g, err := s.CreateGroup(ctx, name, "")
	if err != nil {
		t.Fatalf("create group %s: %v", name, err)
	}
	if err := s.SetGroupGrants(ctx, g.ID, keys); err != nil {
		t.Fatalf("grants of %s: %v", name, err)
	}
	for _, u := range members {
		if err := s.AddMember(ctx, g.ID, u.ID); err != nil {
			t.Fatalf("add %s to %s: %v", u.Username, name, err)
		}
	}
	return g
}

func TestRegistryIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Permissions() {
		if p.Key == "" || p.Label == "" || p.Description == "" || seen[p.Key] {
			t.Errorf("bad or repeated registry row %+v", p)
		}
		seen[p.Key] = true
	}
	for _, k := range []string{PermChatAttachments, PermChatLinks} {
		if p, ok := LookupPermission(k); !ok || !p.Default {
			t.Errorf("%s: %+v %v, want registered and on by default", k, p, ok)
		}
	}
}

// The union rule: the baseline, widened by every group; admins hold all.
// want maps each permission to what Explain says granted it; a permission
// left out must be off.
func TestPermissionsAreAUnion(t *testing.T) {
	type group struct {
		name   string
		grants []string
		member bool
	}
	cases := []struct {
		name     string
		admin    bool
		baseline []string // nil: nothing stored, the registry's defaults
		groups   []group
		want     map[string][]string
	}{
		{name: "defaults",
			want: map[string][]string{PermChatAttachments: {"baseline"}, PermChatLinks: {"baseline"}}},
		{name: "baseline off, no group", baseline: []string{},
			want: map[string][]string{}},
		{name: "baseline off, group on", baseline: []string{},
			groups: []group{{"Hobbits", []string{PermChatLinks}, true}},
			want:   map[string][]string{PermChatLinks: {"Hobbits"}}},
		{name: "two groups granting, sorted without case", baseline: []string{},
			groups: []group{{"hobbits", []string{PermChatLinks}, true}, {"Ents", []string{PermChatLinks, PermChatAttachments}, true}},
			want:   map[string][]string{PermChatLinks: {"Ents", "hobbits"}, PermChatAttachments: {"Ents"}}},
		{name: "a group the person is not in grants nothing", baseline: []string{},
			groups: []group{{"Wizards", []string{PermChatLinks}, false}},
			want:   map[string][]string{}},
		{name: "baseline and group both", baseline: []string{PermChatLinks},
			groups: []group{{"Rangers", []string{PermChatLinks}, true}},
			want:   map[string][]string{PermChatLinks: {"baseline", "Rangers"}}},
		{name: "a group grants, never denies", baseline: []string{PermChatAttachments, PermChatLinks},
			groups: []group{{"Orcs", nil, true}},
			want:   map[string][]string{PermChatAttachments: {"baseline"}, PermChatLinks: {"baseline"}}},
		{name: "admin with nothing else", admin: true, baseline: []string{},
			want: map[string][]string{PermChatAttachments: {"admin"}, PermChatLinks: {"admin"}}},
		{name: "admin in a granting group", admin: true, baseline: []string{PermChatAttachments},
			groups: []group{{"Istari", []string{PermChatLinks}, true}},
			want:   map[string][]string{PermChatAttachments: {"admin", "baseline"}, PermChatLinks: {"admin", "Istari"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := newService(t)
			ctx := context.Background()
			mustUser(t, s, "first", true) // so the person below is not the only admin
			u := mustUser(t, s, "person", c.admin)
			if c.baseline != nil {
				if err := s.SetBaseline(ctx, c.baseline); err != nil {
					t.Fatal(err)
				}
			}
			for _, g := range c.groups {
				if g.member {
					mustGroup(t, s, g.name, g.grants, u)
				} else {
					mustGroup(t, s, g.name, g.grants)
				}
			}
			set, err := s.Resolve(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			ex, err := s.Explain(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			if len(ex) != len(Permissions()) {
				t.Fatalf("explain has %d rows, want one per permission", len(ex))
			}
			for i, p := range Permissions() {
				e := ex[i]
				want := c.want[p.Key]
				if e.Key != p.Key {
					t.Fatalf("row %d is %s, want registry order (%s)", i, e.Key, p.Key)
				}
				if on := len(want) > 0; set.Has(p.Key) != on || e.On != on {
					t.Errorf("%s: resolve %v, explain %v, want %v", p.Key, set.Has(p.Key), e.On, on)
				}
				if got := e.Sources(); !slices.Equal(got, want) {
					t.Errorf("%s: sources %q, want %q", p.Key, got, want)
				}
				has, err := s.Has(ctx, u, p.Key)
				if err != nil || has != e.On {
					t.Errorf("Has(%s) = %v %v, want %v", p.Key, has, err, e.On)
				}
			}
		})
	}
}

// A key stored in a group's JSON that the registry does not have (a
// permission since removed) is ignored on read and dropped on the next
// write.
func TestUnknownStoredPermissionKeysAreIgnored(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	mustUser(t, s, "first", true)
	u := mustUser(t, s, "person", false)
	if err := s.SetBaseline(ctx, nil); err != nil {
		t.Fatal(err)
	}
	g := mustGroup(t, s, "Old", nil, u)
	s.db.W.Exec(`UPDATE groups SET permissions = '["tools.gone", "chat.links", "chat.links"]' WHERE id = ?`, g.ID)

	set, err := s.Resolve(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if !set.Has(PermChatLinks) || set.Has("tools.gone") || len(set) != 1 {
		t.Fatalf("resolved %v, want only chat.links", set)
	}
	got, _ := s.GroupByID(ctx, g.ID)
	if !slices.Equal(got.Grants, []string{PermChatLinks}) {
		t.Fatalf("group grants %q", got.Grants)
	}
	if err := s.SetGroupGrants(ctx, g.ID, got.Grants); err != nil {
		t.Fatal(err)
	}
	var raw string
	s.db.R.QueryRow(`SELECT permissions FROM groups WHERE id = ?`, g.ID).Scan(&raw)
	if raw != `["chat.links"]` {
		t.Fatalf("stored %s after a write", raw)
	}
}

func TestUnregisteredKeysAreRefused(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, s, "person", true)
	if _, err := s.Has(ctx, u, "chat.attachment"); err == nil {
		t.Error("Has accepted a key the registry does not have")
	}
	if fe, ok := fault.As(s.SetBaseline(ctx, []string{"chat.links", "made.up"})); !ok || fe.Field != "permissions" {
		t.Error("SetBaseline accepted a key the registry does not have")
	}
	g := mustGroup(t, s, "G", nil)
	if fe, ok := fault.As(s.SetGroupGrants(ctx, g.ID, []string{"made.up"})); !ok || fe.Field != "permissions" {
		t.Error("SetGroupGrants accepted a key the registry does not have")
	}
	if err := s.SetGroupGrants(ctx, "no-such-group", nil); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("grants of a missing group: %v", err)
	}
}

func TestBaselineWithoutSettingsIsTheDefaults(t *testing.T) {
	full, _ := newService(t)
	s := New(full.db, Options{Params: cheap})
	if got := s.Baseline(); !got.Has(PermChatAttachments) || !got.Has(PermChatLinks) {
		t.Fatalf("baseline %v", got)
	}
	if err := s.SetBaseline(context.Background(), nil); err == nil {
		t.Fatal("SetBaseline with nowhere to store it succeeded")
	}
}
