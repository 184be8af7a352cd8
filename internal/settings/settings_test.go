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
