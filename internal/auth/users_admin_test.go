package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"lembas/internal/fault"
)

func usernames(us []User) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.Username)
	}
	return out
}

func TestListUsersSearchesAndPages(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	for i := range 25 {
		mustUser(t, s, fmt.Sprintf("user%02d", i), false)
	}
	mustUser(t, s, "Treebeard", false)
	mustUser(t, s, "tree_beard", false)
	mustUser(t, s, "treexbeard", false)

	cases := []struct {
		query         string
		limit, offset int
		want          []string
		total         int
	}{
		{"", 3, 0, []string{"tree_beard", "Treebeard", "treexbeard"}, 28},
		{"", 5, 25, []string{"user22", "user23", "user24"}, 28},
		{"", 5, 100, nil, 28},
		{"user1", 0, 0, []string{"user10", "user11", "user12", "user13", "user14", "user15", "user16", "user17", "user18", "user19"}, 10},
		{"USER0", 3, 3, []string{"user03", "user04", "user05"}, 10},
		{"  beard ", 10, 0, []string{"tree_beard", "Treebeard", "treexbeard"}, 3},
		{"_", 10, 0, []string{"tree_beard"}, 1}, // a literal underscore, not LIKE's wildcard
		{"%", 10, 0, nil, 0},
		{"nobody", 10, -4, nil, 0},
	}
	for _, c := range cases {
		got, total, err := s.ListUsers(ctx, c.query, c.limit, c.offset)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(usernames(got), c.want) || total != c.total {
			t.Errorf("ListUsers(%q, %d, %d) = %q, %d; want %q, %d", c.query, c.limit, c.offset, usernames(got), total, c.want, c.total)
		}
	}
	if got, _, _ := s.ListUsers(ctx, "", 0, 0); len(got) != min(28, DefaultUserPage) {
		t.Errorf("default page has %d", len(got))
	}
}

func TestCreateUserIgnoresTheSignupSwitch(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	s.Register(ctx, "first", "password1", false)
	if _, err := s.Register(ctx, "second", "password1", false); !errors.Is(err, ErrSignupClosed) {
		t.Fatalf("sign-up not closed: %v", err)
	}
	u, err := s.CreateUser(ctx, " second ", "password1", true)
	if err != nil || u.Username != "second" || !u.IsAdmin {
		t.Fatalf("create: %+v %v", u, err)
	}
	if _, err := s.Authenticate(ctx, "second", "password1", "x"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ user, pw, field string }{
		{"SECOND", "password1", "username"},
		{"bad name", "password1", "username"},
		{"third", "short", "password"},
	} {
		_, err := s.CreateUser(ctx, c.user, c.pw, false)
		if fe, ok := fault.As(err); !ok || fe.Field != c.field {
			t.Errorf("CreateUser(%q, %q) = %v, want an error on %s", c.user, c.pw, err, c.field)
		}
	}
}

func TestDisablingEndsSessions(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	admin, u := mustUser(t, s, "admin", true), mustUser(t, s, "grima", false)
	tok, _, _ := s.CreateSession(ctx, u.ID, "", "")
	if err := s.SetDisabled(ctx, admin.ID, u.ID, true); err != nil {
		t.Fatal(err)
	}
	var n int
	s.db.R.QueryRow(`SELECT COUNT(*) FROM sessions WHERE user_id = ?`, u.ID).Scan(&n)
	if n != 0 {
		t.Fatalf("%d sessions survive disabling", n)
	}
	if _, err := s.Authenticate(ctx, "grima", "long enough password", "x"); !errors.Is(err, ErrDisabled) {
		t.Fatalf("a disabled account signed in: %v", err)
	}
	if err := s.SetDisabled(ctx, admin.ID, u.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, "grima", "long enough password", "x"); err != nil {
		t.Fatalf("re-enabled account: %v", err)
	}
	if _, _, err := s.SessionUser(ctx, tok); !errors.Is(err, ErrNoSession) {
		t.Fatal("re-enabling brought an old session back")
	}
	if err := s.SetDisabled(ctx, admin.ID, "missing", true); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("disable a missing account: %v", err)
	}
}

func TestResetPasswordEndsSessions(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, s, "bilbo", false)
	tok, _, _ := s.CreateSession(ctx, u.ID, "", "")
	if fe, ok := fault.As(s.ResetPassword(ctx, u.ID, "short")); !ok || fe.Field != "password" {
		t.Fatal("accepted a short password")
	}
	if err := s.ResetPassword(ctx, u.ID, "eleventy-one"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SessionUser(ctx, tok); !errors.Is(err, ErrNoSession) {
		t.Fatal("a session survived the reset")
	}
	if _, err := s.Authenticate(ctx, "bilbo", "long enough password", "x"); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("old password: %v", err)
	}
	if _, err := s.Authenticate(ctx, "bilbo", "eleventy-one", "x"); err != nil {
		t.Fatalf("new password: %v", err)
	}
	if err := s.ResetPassword(ctx, "missing", "eleventy-one"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("reset a missing account: %v", err)
	}
}

func TestTheLastAdministratorStays(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	a, u := mustUser(t, s, "gandalf", true), mustUser(t, s, "pippin", false)
	for name, err := range map[string]error{
		"demote":  s.SetAdmin(ctx, a.ID, a.ID, false),
		"disable": s.SetDisabled(ctx, a.ID, a.ID, true),
		"delete":  s.DeleteUser(ctx, a.ID, a.ID),
	} {
		if !errors.Is(err, ErrLastAdmin) || fault.KindOf(err) != fault.Conflict {
			t.Errorf("%s the last administrator: %v, want ErrLastAdmin", name, err)
		}
	}
	// Somebody who is not an administrator cannot act at all.
	if err := s.SetAdmin(ctx, u.ID, u.ID, true); !errors.Is(err, ErrNotAdmin) {
		t.Fatalf("a member promoted themselves: %v", err)
	}
	// A disabled administrator does not count as the other one.
	b := mustUser(t, s, "saruman", true)
	if err := s.SetDisabled(ctx, a.ID, b.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := s.SetAdmin(ctx, a.ID, a.ID, false); !errors.Is(err, ErrLastAdmin) {
		t.Fatalf("demoted with only a disabled administrator left: %v", err)
	}
	// Demoting the disabled one takes away no administrator who can act.
	if err := s.SetAdmin(ctx, a.ID, b.ID, false); err != nil {
		t.Fatal(err)
	}
	// With a second administrator, the first may step down.
	if err := s.SetAdmin(ctx, a.ID, u.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := s.SetAdmin(ctx, a.ID, a.ID, false); err != nil {
		t.Fatalf("stepping down beside another administrator: %v", err)
	}
	if err := s.SetAdmin(ctx, a.ID, u.ID, false); !errors.Is(err, ErrNotAdmin) {
		t.Fatalf("a former administrator acted: %v", err)
	}
}

// Two administrators removing each other, or themselves, at the same
// moment must leave one: the check and the change share a transaction.
func TestLastAdministratorRaces(t *testing.T) {
	ops := map[string]func(s *Service, actor, target string) error{
		"demote": func(s *Service, actor, target string) error {
			return s.SetAdmin(context.Background(), actor, target, false)
		},
		"disable": func(s *Service, actor, target string) error {
			return s.SetDisabled(context.Background(), actor, target, true)
		},
		"delete": func(s *Service, actor, target string) error {
			return s.DeleteUser(context.Background(), actor, target)
		},
	}
	for name, op := range ops {
		for _, each := range []string{"other", "self"} {
			t.Run(name+" "+each, func(t *testing.T) {
				for round := range 10 {
					s, _ := newService(t)
					a, b := mustUser(t, s, "elrond", true), mustUser(t, s, "galadriel", true)
					pairs := [][2]string{{a.ID, b.ID}, {b.ID, a.ID}}
					if each == "self" {
						pairs = [][2]string{{a.ID, a.ID}, {b.ID, b.ID}}
					}
					errs := make([]error, 2)
					var wg sync.WaitGroup
					start := make(chan struct{})
					for i, p := range pairs {
						wg.Add(1)
						go func() {
							defer wg.Done()
							<-start
							errs[i] = op(s, p[0], p[1])
						}()
					}
					close(start)
					wg.Wait()
					var left int
					s.db.R.QueryRow(`SELECT COUNT(*) FROM users WHERE is_admin = 1 AND disabled = 0`).Scan(&left)
					failed := 0
					for _, err := range errs {
						if err != nil {
							if !errors.Is(err, ErrLastAdmin) && !errors.Is(err, ErrNotAdmin) {
								t.Fatalf("round %d: unexpected error %v", round, err)
							}
							failed++
						}
					}
					if left != 1 || failed != 1 {
						t.Fatalf("round %d: %d administrators left, %d refused (%v); want 1 and 1", round, left, failed, errs)
					}
				}
			})
		}
	}
}

func TestPreferences(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, s, "legolas", false)
	if err := s.SetPreferences(ctx, u.ID, " Europe/Paris ", "0190a1b2-model"); err != nil {
		t.Fatal(err)
	}
	tok, _, _ := s.CreateSession(ctx, u.ID, "", "")
	byID, _ := s.UserByID(ctx, u.ID)
	bySession, _, _ := s.SessionUser(ctx, tok)
	bySignIn, _ := s.Authenticate(ctx, "legolas", "long enough password", "x")
	listed, _, _ := s.ListUsers(ctx, "legolas", 1, 0)
	for name, got := range map[string]User{"UserByID": byID, "SessionUser": bySession, "Authenticate": bySignIn, "ListUsers": listed[0]} {
		if got.Timezone != "Europe/Paris" || got.DefaultModelID != "0190a1b2-model" || got.CreatedAt.IsZero() {
			t.Errorf("%s loaded %+v", name, got)
		}
	}
	for _, bad := range []string{"Middle/Earth", "Local", "../etc/passwd", "/etc/localtime"} {
		if fe, ok := fault.As(s.SetPreferences(ctx, u.ID, bad, "")); !ok || fe.Field != "timezone" {
			t.Errorf("time zone %q accepted", bad)
		}
	}
	if fe, ok := fault.As(s.SetPreferences(ctx, u.ID, "", strings.Repeat("m", MaxModelID+1))); !ok || fe.Field != "default_model_id" {
		t.Error("an overlong model id was accepted")
	}
	// Clearing both is allowed: the browser's zone, no default model.
	if err := s.SetPreferences(ctx, u.ID, "", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.UserByID(ctx, u.ID); got.Timezone != "" || got.DefaultModelID != "" {
		t.Fatalf("after clearing: %+v", got)
	}
	if err := s.SetPreferences(ctx, "missing", "UTC", ""); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("preferences of a missing account: %v", err)
	}
}
