package settings

import (
	"context"
	"path/filepath"
	"testing"

	"lembas/internal/db"
)

func openStore(t *testing.T, path string) (*Store, *db.DB) {
	t.Helper()
	d, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return s, d
}

func TestDefaultsWhenNothingStored(t *testing.T) {
	s, d := openStore(t, filepath.Join(t.TempDir(), "db"))
	defer d.Close()
	g := s.General()
	if g.InstanceName != "LLeMbas" || !g.AllowSignup {
		t.Fatalf("defaults = %+v", g)
	}
	if s.Source(KeyAllowSignup) != FromDefault {
		t.Fatalf("source = %s", s.Source(KeyAllowSignup))
	}
}

// The environment seeds only the first start; an administrator's choice
// survives a restart with the environment still set.
func TestEnvironmentSeedsOnlyOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	s, d := openStore(t, path)
	if ok, err := s.Seed(ctx, KeyAllowSignup, false); !ok || err != nil {
		t.Fatalf("first seed: %v %v", ok, err)
	}
	if s.General().AllowSignup || s.Source(KeyAllowSignup) != FromEnv {
		t.Fatal("seed not in force")
	}
	if err := s.SaveGeneral(ctx, General{InstanceName: "Rivendell", AllowSignup: true}); err != nil {
		t.Fatal(err)
	}
	d.Close()

	s, d = openStore(t, path)
	defer d.Close()
	if ok, _ := s.Seed(ctx, KeyAllowSignup, false); ok {
		t.Fatal("the environment overwrote a stored value on restart")
	}
	g := s.General()
	if !g.AllowSignup || g.InstanceName != "Rivendell" || s.Source(KeyAllowSignup) != FromAdmin {
		t.Fatalf("after restart: %+v source=%s", g, s.Source(KeyAllowSignup))
	}
}

func TestEmptyNameMeansDefault(t *testing.T) {
	s, d := openStore(t, filepath.Join(t.TempDir(), "db"))
	defer d.Close()
	if err := s.SaveGeneral(context.Background(), General{InstanceName: "", AllowSignup: false}); err != nil {
		t.Fatal(err)
	}
	if g := s.General(); g.InstanceName != "LLeMbas" || g.AllowSignup {
		t.Fatalf("got %+v", g)
	}
}

func TestPermissionBaseline(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	s, d := openStore(t, path)
	defaults := map[string]bool{"chat.attachments": true, "chat.links": true}

	got := s.PermissionBaseline(defaults)
	if !got["chat.attachments"] || !got["chat.links"] || len(got) != 2 {
		t.Fatalf("nothing stored: %v, want the defaults", got)
	}
	if s.Source(KeyPermissionBaseline) != FromDefault {
		t.Fatalf("source = %s", s.Source(KeyPermissionBaseline))
	}
	// The result is a copy: changing it changes nothing stored or passed.
	got["chat.links"] = false
	if !defaults["chat.links"] || !s.PermissionBaseline(defaults)["chat.links"] {
		t.Fatal("the returned map aliases the defaults")
	}

	// Unknown keys are not written.
	err := s.SavePermissionBaseline(ctx, defaults, map[string]bool{"chat.links": false, "tools.gone": true})
	if err != nil {
		t.Fatal(err)
	}
	var raw string
	d.R.QueryRow(`SELECT value FROM settings WHERE key = ?`, KeyPermissionBaseline).Scan(&raw)
	if raw != `{"chat.links":false}` {
		t.Fatalf("stored %s", raw)
	}
	d.Close()

	// After a restart, the choice holds; a key added to the registry since
	// follows its own default; a stored key the code no longer knows is
	// ignored.
	s, d = openStore(t, path)
	defer d.Close()
	later := map[string]bool{"chat.links": true, "tools.fetch": true}
	got = s.PermissionBaseline(later)
	if got["chat.links"] || !got["tools.fetch"] || len(got) != 2 {
		t.Fatalf("after restart: %v", got)
	}
	if s.Source(KeyPermissionBaseline) != FromAdmin {
		t.Fatalf("source = %s", s.Source(KeyPermissionBaseline))
	}
}
