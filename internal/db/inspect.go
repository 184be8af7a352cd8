package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Facts describe a database without changing it, for `lembas info`.
type Facts struct {
	Exists        bool
	SchemaVersion int
	KnownVersion  int
	// Rows counts the rows of each table asked about; a table this
	// database does not have yet is absent from the map, not zero.
	Rows map[string]int
}

// Inspect opens the database at path read-only (never creating or
// migrating it) and counts the rows of tables.
func Inspect(ctx context.Context, path string, tables ...string) (Facts, error) {
	f := Facts{KnownVersion: len(Migrations()), Rows: map[string]int{}}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return f, nil
	} else if err != nil {
		return f, err
	}
	f.Exists = true
	conn, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return f, err
	}
	defer conn.Close()
	var has int
	if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&has); err != nil {
		return f, fmt.Errorf("db: inspect: %w", err)
	}
	if has > 0 {
		if f.SchemaVersion, err = SchemaVersion(ctx, conn); err != nil {
			return f, err
		}
	}
	for _, t := range tables {
		var exists int
		conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, t).Scan(&exists)
		if exists == 0 {
			continue
		}
		var n int
		// t is one of our own table names, never input: checked above
		// against sqlite_master, and quoted.
		if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM "`+t+`"`).Scan(&n); err != nil {
			return f, fmt.Errorf("db: count %s: %w", t, err)
		}
		f.Rows[t] = n
	}
	return f, nil
}
