package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"lembas/internal/fault"
)

func TestGroupNamesAreUniqueWithoutCase(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	g, err := s.CreateGroup(ctx, "  Fellowship ", " Nine walkers ")
	if err != nil || g.Name != "Fellowship" || g.Description != "Nine walkers" {
		t.Fatalf("create: %+v %v", g, err)
	}
	other, _ := s.CreateGroup(ctx, "Council", "")
	cases := []struct {
		name string
		err  error
	}{
		{"create the same name", func() error { _, err := s.CreateGroup(ctx, "Fellowship", ""); return err }()},
		{"create it in other case", func() error { _, err := s.CreateGroup(ctx, "FELLOWSHIP", ""); return err }()},
		{"create with no name", func() error { _, err := s.CreateGroup(ctx, "   ", ""); return err }()},
		{"create a long name", func() error { _, err := s.CreateGroup(ctx, strings.Repeat("x", MaxGroupName+1), ""); return err }()},
		{"create a two-line name", func() error { _, err := s.CreateGroup(ctx, "a\nb", ""); return err }()},
		{"rename onto another", s.UpdateGroup(ctx, other.ID, "fellowship", "")},
	}
	for _, c := range cases {
		if fe, ok := fault.As(c.err); !ok || fe.Field != "name" {
			t.Errorf("%s: %v, want a field error on name", c.name, c.err)
		}
	}
	if fe, ok := fault.As(s.UpdateGroup(ctx, g.ID, "Fellowship", strings.Repeat("d", MaxGroupDescription+1))); !ok || fe.Field != "description" {
		t.Error("accepted a long description")
	}
	// Renaming a group to its own name in another case is fine.
	if err := s.UpdateGroup(ctx, g.ID, "FELLOWSHIP", "Of the ring"); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GroupByID(ctx, g.ID)
	if got.Name != "FELLOWSHIP" || got.Description != "Of the ring" {
		t.Fatalf("after rename: %+v", got)
	}
	if err := s.UpdateGroup(ctx, "missing", "X", ""); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("rename a missing group: %v", err)
	}
	if _, err := s.GroupByID(ctx, "missing"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("get a missing group: %v", err)
	}
}

func TestMembership(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	sam, frodo := mustUser(t, s, "sam", false), mustUser(t, s, "Frodo", false)
	hobbits := mustGroup(t, s, "hobbits", nil)
	bearers := mustGroup(t, s, "Bearers", nil)
	mustGroup(t, s, "empty", nil)
	for _, m := range []struct{ g, u string }{{hobbits.ID, sam.ID}, {hobbits.ID, frodo.ID}, {hobbits.ID, sam.ID}, {bearers.ID, frodo.ID}} {
		if err := s.AddMember(ctx, m.g, m.u); err != nil {
			t.Fatalf("add: %v", err)
		}
	}
	if err := s.AddMember(ctx, hobbits.ID, "nobody"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("added a missing account: %v", err)
	}
	if err := s.AddMember(ctx, "nothing", sam.ID); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("added to a missing group: %v", err)
	}
	members, err := s.Members(ctx, hobbits.ID)
	if err != nil || len(members) != 2 || members[0].Username != "Frodo" || members[1].Username != "sam" {
		t.Fatalf("members: %+v %v", members, err)
	}
	if _, err := s.Members(ctx, "nothing"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("members of a missing group: %v", err)
	}
	groups, _ := s.ListGroups(ctx)
	var summary []string
	for _, g := range groups {
		summary = append(summary, fmt.Sprintf("%s:%d", g.Name, g.Members))
	}
	if got := strings.Join(summary, " "); got != "Bearers:1 empty:0 hobbits:2" {
		t.Fatalf("list = %s", got)
	}
	of, _ := s.GroupsOf(ctx, frodo.ID)
	if len(of) != 2 || of[0].Name != "Bearers" || of[1].Name != "hobbits" {
		t.Fatalf("groups of frodo: %+v", of)
	}

	if err := s.RemoveMember(ctx, hobbits.ID, sam.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveMember(ctx, hobbits.ID, sam.ID); err != nil {
		t.Fatalf("removing a non-member: %v", err)
	}
	if of, _ := s.GroupsOf(ctx, sam.ID); len(of) != 0 {
		t.Fatalf("sam is still in %+v", of)
	}
}

// Deleting a group forgets everything that named it; so does deleting an
// account.
func TestDeletingForgetsMemberships(t *testing.T) {
	s, c := newService(t)
	ctx := context.Background()
	admin := mustUser(t, s, "admin", true)
	sam, frodo := mustUser(t, s, "sam", false), mustUser(t, s, "frodo", false)
	g := mustGroup(t, s, "hobbits", []string{PermChatLinks}, sam, frodo)
	keep := mustGroup(t, s, "gardeners", nil, sam)

	if err := s.DeleteGroup(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteGroup(ctx, g.ID); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("deleted twice: %v", err)
	}
	var n int
	s.db.R.QueryRow(`SELECT COUNT(*) FROM group_members WHERE group_id = ?`, g.ID).Scan(&n)
	if n != 0 {
		t.Fatalf("%d memberships of a deleted group remain", n)
	}
	if of, _ := s.GroupsOf(ctx, frodo.ID); len(of) != 0 {
		t.Fatalf("frodo is in %+v", of)
	}

	tok, _, _ := s.CreateSession(ctx, sam.ID, "", "")
	s.RecordUsage(ctx, sam.ID, c.Now(), 1, 1, false)
	if err := s.DeleteUser(ctx, admin.ID, sam.ID); err != nil {
		t.Fatal(err)
	}
	for table, q := range map[string]string{
		"group_members": `SELECT COUNT(*) FROM group_members WHERE user_id = ?`,
		"sessions":      `SELECT COUNT(*) FROM sessions WHERE user_id = ?`,
		"usage":         `SELECT COUNT(*) FROM usage WHERE user_id = ?`,
	} {
		s.db.R.QueryRow(q, sam.ID).Scan(&n)
		if n != 0 {
			t.Errorf("%d %s rows of a deleted account remain", n, table)
		}
	}
	if _, _, err := s.SessionUser(ctx, tok); !errors.Is(err, ErrNoSession) {
		t.Fatalf("a deleted account's session: %v", err)
	}
	if got, _ := s.GroupByID(ctx, keep.ID); got.Members != 0 {
		t.Fatalf("gardeners still counts %d members", got.Members)
	}
	if err := s.DeleteUser(ctx, admin.ID, sam.ID); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("deleted twice: %v", err)
	}
}
