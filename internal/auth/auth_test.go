package auth

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"lembas/internal/db"
	"lembas/internal/fault"
	"lembas/internal/settings"
)

// cheap keeps tests fast; the parameters are stored in each hash, so the
// code paths are the production ones.
var cheap = Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newService(t *testing.T) (*Service, *clock) {
	t.Helper()
	d, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	st, err := settings.Open(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	return New(d, Options{Params: cheap, Now: c.Now, Concurrent: 4, Settings: st}), c
}

func TestHashVerify(t *testing.T) {
	h := NewHasher(cheap, 1)
	ctx := context.Background()
	enc, err := h.Hash(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("hash %q does not carry its parameters", enc)
	}
	if ok, _ := h.Verify(ctx, enc, "correct horse"); !ok {
		t.Fatal("right password refused")
	}
	if ok, _ := h.Verify(ctx, enc, "correct horsE"); ok {
		t.Fatal("wrong password accepted")
	}
	// A hash made with other parameters still verifies: they are read back.
	other, _ := NewHasher(Params{Memory: 128, Time: 2, Threads: 2, SaltLen: 16, KeyLen: 32}, 1).Hash(ctx, "pw")
	if ok, err := h.Verify(ctx, other, "pw"); !ok || err != nil {
		t.Fatalf("hash with other parameters: %v %v", ok, err)
	}
	for _, bad := range []string{"", "plain", "$argon2id$v=19$m=99999999,t=1,p=1$AAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA"} {
		if _, err := h.Verify(ctx, bad, "pw"); err == nil {
			t.Errorf("Verify accepted a malformed hash %q", bad)
		}
	}
}

func TestFirstAccountIsAdminAndOthersAreNot(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	a, err := s.Register(ctx, "galadriel", "lothlorien", true)
	if err != nil || !a.IsAdmin {
		t.Fatalf("first: %+v %v", a, err)
	}
	b, err := s.Register(ctx, "sam", "potatoes!", true)
	if err != nil || b.IsAdmin {
		t.Fatalf("second: %+v %v", b, err)
	}
}

// Two simultaneous first registrations must not both become administrator.
func TestConcurrentFirstRegistrationsMakeOneAdmin(t *testing.T) {
	for round := 0; round < 5; round++ {
		s, _ := newService(t)
		ctx := context.Background()
		const n = 12
		var wg sync.WaitGroup
		users := make(chan User, n)
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				u, err := s.Register(ctx, fmt.Sprintf("hobbit%d", i), "second breakfast", true)
				if err != nil {
					t.Error(err)
					return
				}
				users <- u
			}()
		}
		close(start)
		wg.Wait()
		close(users)
		admins := 0
		for u := range users {
			if u.IsAdmin {
				admins++
			}
		}
		var stored int
		s.db.R.QueryRow(`SELECT COUNT(*) FROM users WHERE is_admin = 1`).Scan(&stored)
		if admins != 1 || stored != 1 {
			t.Fatalf("round %d: %d admins returned, %d stored; want exactly 1", round, admins, stored)
		}
	}
}

func TestSignupClosedExceptForTheFirstAccount(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	if _, err := s.Register(ctx, "first", "password1", false); err != nil {
		t.Fatalf("the first account was refused with sign-up closed: %v", err)
	}
	_, err := s.Register(ctx, "second", "password1", false)
	if !errors.Is(err, ErrSignupClosed) {
		t.Fatalf("err = %v, want ErrSignupClosed", err)
	}
}

func TestRegisterValidation(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	s.Register(ctx, "frodo", "the ring bearer", true)
	cases := []struct{ user, pw, field string }{
		{"", "long enough", "username"},
		{"has space", "long enough", "username"},
		{"<script>", "long enough", "username"},
		{strings.Repeat("a", 33), "long enough", "username"},
		{"merry", "short", "password"},
		{"FRODO", "long enough", "username"}, // taken, case-insensitively
	}
	for _, c := range cases {
		_, err := s.Register(ctx, c.user, c.pw, true)
		fe, ok := fault.As(err)
		if !ok || fe.Field != c.field {
			t.Errorf("Register(%q, %q) = %v, want an error on %s", c.user, c.pw, err, c.field)
		}
	}
}

func TestAuthenticate(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	s.Register(ctx, "aragorn", "anduril reforged", true)
	if u, err := s.Authenticate(ctx, "Aragorn", "anduril reforged", "1.2.3.4"); err != nil || u.Username != "aragorn" {
		t.Fatalf("sign in: %+v %v", u, err)
	}
	_, errWrongPw := s.Authenticate(ctx, "aragorn", "narsil", "1.2.3.4")
	_, errNoUser := s.Authenticate(ctx, "boromir", "narsil", "1.2.3.4")
	if !errors.Is(errWrongPw, ErrBadCredentials) || !errors.Is(errNoUser, ErrBadCredentials) {
		t.Fatalf("wrong password: %v; unknown user: %v; both should be ErrBadCredentials", errWrongPw, errNoUser)
	}
}

func TestRepeatedFailuresAreSlowedAndSaySo(t *testing.T) {
	s, c := newService(t)
	ctx := context.Background()
	s.Register(ctx, "gollum", "my precious", true)
	for i := 0; i < 5; i++ {
		if _, err := s.Authenticate(ctx, "gollum", "wrong", "10.0.0.1"); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	s.Authenticate(ctx, "gollum", "wrong", "10.0.0.1") // sixth: starts the wait
	_, err := s.Authenticate(ctx, "gollum", "my precious", "10.0.0.2")
	if fault.KindOf(err) != fault.TooMany || !strings.Contains(err.Error(), "Wait 2 seconds") {
		t.Fatalf("right password during the wait: %v, want a TooMany saying how long", err)
	}
	// Another address is slowed too for that account; another account from
	// the first address as well.
	s.Register(ctx, "smeagol", "my precious", true)
	if _, err := s.Authenticate(ctx, "smeagol", "my precious", "10.0.0.1"); fault.KindOf(err) != fault.TooMany {
		t.Fatalf("same address, other account: %v", err)
	}
	c.Add(3 * time.Second)
	if _, err := s.Authenticate(ctx, "gollum", "my precious", "10.0.0.2"); err != nil {
		t.Fatalf("after the wait: %v", err)
	}
	// Waits double.
	for i := 0; i < 7; i++ {
		c.Add(20 * time.Minute)
		s.Authenticate(ctx, "gollum", "wrong", "10.0.0.3")
	}
	if w := s.throttle.Wait("user:gollum"); w < 4*time.Second {
		t.Fatalf("wait after seven more failures = %v, want it to have grown", w)
	}
}

func TestSessions(t *testing.T) {
	s, c := newService(t)
	ctx := context.Background()
	u, _ := s.Register(ctx, "bilbo", "there and back", true)
	tok1, s1, err := s.CreateSession(ctx, u.ID, "Firefox", "1.1.1.1")
	if err != nil {
		t.Fatal(err)
	}
	tok2, _, _ := s.CreateSession(ctx, u.ID, "Chromium", "1.1.1.2")
	got, sess, err := s.SessionUser(ctx, tok1)
	if err != nil || got.ID != u.ID || sess.ID != s1.ID {
		t.Fatalf("SessionUser: %+v %+v %v", got, sess, err)
	}
	var stored string
	s.db.R.QueryRow(`SELECT token_hash FROM sessions WHERE id = ?`, s1.ID).Scan(&stored)
	if stored == tok1 || strings.Contains(stored, tok1) {
		t.Fatal("the token is stored in the clear")
	}
	list, _ := s.Sessions(ctx, u.ID)
	if len(list) != 2 {
		t.Fatalf("%d sessions listed", len(list))
	}
	// Sign out everywhere else.
	if n, err := s.RevokeOtherSessions(ctx, u.ID, s1.ID); n != 1 || err != nil {
		t.Fatalf("revoke others: %d %v", n, err)
	}
	if _, _, err := s.SessionUser(ctx, tok2); !errors.Is(err, ErrNoSession) {
		t.Fatalf("revoked session still works: %v", err)
	}
	// Another account cannot revoke this session by id.
	o, _ := s.Register(ctx, "lobelia", "spoons spoons", true)
	if err := s.RevokeSession(ctx, o.ID, s1.ID); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("another account revoked a session: %v", err)
	}
	// Use keeps a session alive; disuse ends it.
	c.Add(SessionLifetime - time.Hour)
	if _, _, err := s.SessionUser(ctx, tok1); err != nil {
		t.Fatalf("session ended early: %v", err)
	}
	c.Add(SessionLifetime - time.Hour)
	if _, _, err := s.SessionUser(ctx, tok1); err != nil {
		t.Fatalf("a used session did not slide: %v", err)
	}
	c.Add(SessionLifetime + time.Minute)
	if _, _, err := s.SessionUser(ctx, tok1); !errors.Is(err, ErrNoSession) {
		t.Fatalf("expired session works: %v", err)
	}
	if n, _ := s.SweepSessions(ctx); n != 1 {
		t.Fatalf("sweep removed %d", n)
	}
	if err := s.DeleteSession(ctx, "nonsense"); err != nil {
		t.Fatal(err)
	}
}

func TestDisabledAccountHasNoSession(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	u, _ := s.Register(ctx, "saruman", "many colours", true)
	tok, _, _ := s.CreateSession(ctx, u.ID, "", "")
	s.db.W.Exec(`UPDATE users SET disabled = 1 WHERE id = ?`, u.ID)
	if _, _, err := s.SessionUser(ctx, tok); !errors.Is(err, ErrNoSession) {
		t.Fatalf("disabled account kept its session: %v", err)
	}
	if _, err := s.Authenticate(ctx, "saruman", "many colours", "x"); !errors.Is(err, ErrDisabled) {
		t.Fatalf("disabled account signed in: %v", err)
	}
}

func TestChangePassword(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	u, _ := s.Register(ctx, "pippin", "fool of a took", true)
	if fe, _ := fault.As(s.ChangePassword(ctx, u.ID, "wrong", "new password")); fe == nil || fe.Field != "current_password" {
		t.Fatal("changed with the wrong current password")
	}
	if fe, _ := fault.As(s.ChangePassword(ctx, u.ID, "fool of a took", "short")); fe == nil || fe.Field != "new_password" {
		t.Fatal("accepted a short new password")
	}
	if err := s.ChangePassword(ctx, u.ID, "fool of a took", "guard of the citadel"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, "pippin", "guard of the citadel", "x"); err != nil {
		t.Fatal(err)
	}
}

func TestCreateOrPromoteAdmin(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	s.Register(ctx, "first", "password1", true)
	s.Register(ctx, "eowyn", "no man am i", true)
	created, err := s.CreateOrPromoteAdmin(ctx, "eowyn", "")
	if err != nil || created {
		t.Fatalf("promote: %v %v", created, err)
	}
	u, _ := s.Authenticate(ctx, "eowyn", "no man am i", "x")
	if !u.IsAdmin {
		t.Fatal("not promoted")
	}
	created, err = s.CreateOrPromoteAdmin(ctx, "faramir", "ithilien rangers")
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	if _, err := s.CreateOrPromoteAdmin(ctx, "nobody", ""); err == nil {
		t.Fatal("created an account with no password")
	}
}
