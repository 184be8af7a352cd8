package db

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

func open(t *testing.T) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	d, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, path
}

func TestOpenAppliesMigrationsOnce(t *testing.T) {
	ctx := context.Background()
	d, path := open(t)
	v, err := SchemaVersion(ctx, d.R)
	if err != nil {
		t.Fatal(err)
	}
	if v != len(Migrations()) {
		t.Fatalf("schema version %d, want %d", v, len(Migrations()))
	}
	d.Close()
	d2, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer d2.Close()
	var n int
	d2.R.QueryRow("SELECT COUNT(*) FROM schema_migrations").Scan(&n)
	if n != len(Migrations()) {
		t.Fatalf("%d migrations recorded after reopening, want %d", n, len(Migrations()))
	}
}

func TestPragmasOnEveryPooledConnection(t *testing.T) {
	d, _ := open(t)
	ctx := context.Background()
	// Hold several read connections at once so the pool must open new ones.
	var conns []interface{ Close() error }
	for i := 0; i < 3; i++ {
		c, err := d.R.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var fk, busy int
		var mode string
		c.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk)
		c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy)
		c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode)
		if fk != 1 || busy != 5000 || mode != "wal" {
			t.Errorf("conn %d: foreign_keys=%d busy_timeout=%d journal_mode=%s", i, fk, busy, mode)
		}
	}
	for _, c := range conns {
		c.Close()
	}
}

func TestReadPoolCannotWrite(t *testing.T) {
	d, _ := open(t)
	_, err := d.R.Exec(`INSERT INTO settings (key, value, source, updated_at) VALUES ('x', '1', 'admin', 0)`)
	if err == nil {
		t.Fatal("the read pool accepted a write")
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	d, path := open(t)
	if _, err := d.W.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)`); err != nil {
		t.Fatal(err)
	}
	d.Close()
	_, err := Open(ctx, path)
	var newer *ErrNewerSchema
	if !errors.As(err, &newer) || newer.Have != 999 {
		t.Fatalf("err = %v, want ErrNewerSchema", err)
	}
	if !strings.Contains(err.Error(), "newer version") {
		t.Fatalf("message does not say why: %v", err)
	}
}

func TestFailedMigrationLeavesNothingBehind(t *testing.T) {
	ctx := context.Background()
	d, _ := open(t)
	bad := append(Migrations(), Migration{
		Version: len(Migrations()) + 1, Name: "broken",
		SQL: "CREATE TABLE half (id TEXT) STRICT; THIS IS NOT SQL;",
	})
	if err := migrate(ctx, d.W, bad); err == nil {
		t.Fatal("a broken migration applied")
	}
	var n int
	d.R.QueryRow("SELECT COUNT(*) FROM sqlite_master WHERE name = 'half'").Scan(&n)
	if n != 0 {
		t.Fatal("the broken migration's first statement was kept")
	}
	v, _ := SchemaVersion(ctx, d.R)
	if v != len(Migrations()) {
		t.Fatalf("version moved to %d", v)
	}
}

func TestMigrationNumberingIsChecked(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a gap in the numbering was accepted")
		}
	}()
	mustParseMigrations(fstest.MapFS{
		"migrations/0001_a.sql": {Data: []byte("SELECT 1;")},
		"migrations/0003_c.sql": {Data: []byte("SELECT 1;")},
	})
}

// Without _txlock=immediate a read-then-write transaction fails with
// SQLITE_BUSY under concurrency despite the busy timeout.
func TestConcurrentReadThenWriteTransactions(t *testing.T) {
	d, _ := open(t)
	ctx := context.Background()
	if _, err := d.W.Exec(`INSERT INTO settings (key, value, source, updated_at) VALUES ('n', '0', 'admin', 0)`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- d.Tx(ctx, func(tx *sql.Tx) error {
				var n int
				if err := tx.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM settings WHERE key = 'n'`).Scan(&n); err != nil {
					return err
				}
				_, err := tx.ExecContext(ctx, `UPDATE settings SET value = ? WHERE key = 'n'`, strconv.Itoa(n+1))
				return err
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var got string
	d.R.QueryRow(`SELECT value FROM settings WHERE key = 'n'`).Scan(&got)
	if got != "50" {
		t.Fatalf("counter = %s after 50 increments: lost updates", got)
	}
}
