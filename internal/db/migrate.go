package db

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migration is one numbered schema step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// ErrNewerSchema is returned when the database was written by a newer
// version of LLeMbas than this binary. Opening it anyway could damage it.
type ErrNewerSchema struct {
	Have, Know int
}

func (e *ErrNewerSchema) Error() string {
	return fmt.Sprintf("the database is at schema version %d but this LLeMbas only knows up to %d: it was written by a newer version; run that version, or restore a backup", e.Have, e.Know)
}

// Migrations lists the embedded migrations in order. File names are
// NNNN_name.sql; a gap or a duplicate number is a programming error and
// panics at startup rather than running a half-known schema.
func Migrations() []Migration {
	return mustParseMigrations(migrationFiles)
}

func mustParseMigrations(fsys fs.FS) []Migration {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		panic(err)
	}
	var ms []Migration
	for _, n := range names {
		base := strings.TrimPrefix(n, "migrations/")
		num, name, ok := strings.Cut(strings.TrimSuffix(base, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			panic("db: migration file name must be NNNN_name.sql: " + base)
		}
		body, err := fs.ReadFile(fsys, n)
		if err != nil {
			panic(err)
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			panic(fmt.Sprintf("db: migrations must be numbered 1, 2, 3…; found %d at position %d", m.Version, i+1))
		}
	}
	return ms
}

// SchemaVersion reports the highest applied migration.
func SchemaVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var v sql.NullInt64
	err := q.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("db: schema version: %w", err)
	}
	return int(v.Int64), nil
}

// Migrate applies every pending migration, each in its own transaction,
// recording it in schema_migrations.
func Migrate(ctx context.Context, w *sql.DB) error {
	return migrate(ctx, w, Migrations())
}

func migrate(ctx context.Context, w *sql.DB, ms []Migration) error {
	if _, err := w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("db: create schema_migrations: %w", err)
	}
	have, err := SchemaVersion(ctx, w)
	if err != nil {
		return err
	}
	if have > len(ms) {
		return &ErrNewerSchema{Have: have, Know: len(ms)}
	}
	for _, m := range ms[have:] {
		if err := applyMigration(ctx, w, m); err != nil {
			return err
		}
	}
	return nil
}

func applyMigration(ctx context.Context, w *sql.DB, m Migration) error {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("db: migration %04d: begin: %w", m.Version, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("db: migration %04d_%s: %w", m.Version, m.Name, err)
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.Version, m.Name, time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("db: migration %04d: record: %w", m.Version, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("db: migration %04d: commit: %w", m.Version, err)
	}
	return nil
}
