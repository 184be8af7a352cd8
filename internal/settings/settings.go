// Package settings owns instance settings: values an administrator changes
// at runtime. Defaults live in code and only overrides are stored, so an
// improved default still reaches an instance that never changed it. An
// environment value seeds a setting on the first start only; once a value
// is stored, the database wins, or a toggle in the UI would silently revert
// on the next restart.
//
// Reads come from an in-memory copy kept current by every save, so a page
// can read settings without a query.
package settings

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"time"

	"lembas/internal/db"
)

// Source says where a setting's current value came from.
type Source string

const (
	FromDefault Source = "default"
	FromEnv     Source = "env"
	FromAdmin   Source = "admin"
)

// Keys of the settings this version knows.
const (
	KeyInstanceName       = "instance_name"
	KeyAllowSignup        = "allow_signup"
	KeyPermissionBaseline = "permission_baseline"
	KeySystemPrompt       = "system_prompt"
)

// General is the /admin/general group.
type General struct {
	InstanceName string
	AllowSignup  bool
	// SystemPrompt is the last rung of the prompt ladder: used when a
	// chat, its folder and its model set none.
	SystemPrompt string
}

// DefaultGeneral is what an instance that never changed anything has.
var defaultGeneral = General{InstanceName: "LLeMbas", AllowSignup: true}

// envNames names the variable that can seed each setting, for the admin
// page's "from the environment" hint.
var envNames = map[string]string{
	KeyAllowSignup: "LEMBAS_ALLOW_SIGNUP",
}

// EnvName returns the environment variable that seeds key, if any.
func EnvName(key string) string { return envNames[key] }

type entry struct {
	raw    string // JSON
	source Source
}

// Store reads and writes instance settings.
type Store struct {
	db *db.DB

	mu     sync.RWMutex
	stored map[string]entry
}

// Open loads the stored overrides.
func Open(ctx context.Context, d *db.DB) (*Store, error) {
	s := &Store{db: d, stored: map[string]entry{}}
	rows, err := d.R.QueryContext(ctx, `SELECT key, value, source FROM settings`)
	if err != nil {
		return nil, fmt.Errorf("settings: load: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var e entry
		if err := rows.Scan(&k, &e.raw, &e.source); err != nil {
			return nil, fmt.Errorf("settings: load: %w", err)
		}
		s.stored[k] = e
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("settings: load: %w", err)
	}
	return s, nil
}

// Seed stores value for key as coming from the environment, but only when
// nothing is stored for key yet. It reports whether it stored anything.
func (s *Store) Seed(ctx context.Context, key string, value any) (bool, error) {
	raw, err := json.Marshal(value)
	if err != nil {
		return false, fmt.Errorf("settings: seed %s: %w", key, err)
	}
	res, err := s.db.W.ExecContext(ctx,
		`INSERT INTO settings (key, value, source, updated_at) VALUES (?, ?, 'env', ?)
		 ON CONFLICT(key) DO NOTHING`, key, string(raw), time.Now().UnixMilli())
	if err != nil {
		return false, fmt.Errorf("settings: seed %s: %w", key, err)
	}
	n, _ := res.RowsAffected()
	if n == 0 {
		return false, nil
	}
	s.mu.Lock()
	s.stored[key] = entry{raw: string(raw), source: FromEnv}
	s.mu.Unlock()
	return true, nil
}

// Source reports where key's current value comes from.
func (s *Store) Source(key string) Source {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e, ok := s.stored[key]; ok {
		return e.source
	}
	return FromDefault
}

// General returns the general settings in force.
func (s *Store) General() General {
	g := defaultGeneral
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.decode(KeyInstanceName, &g.InstanceName)
	s.decode(KeyAllowSignup, &g.AllowSignup)
	s.decode(KeySystemPrompt, &g.SystemPrompt)
	if g.InstanceName == "" {
		// An empty stored name is somebody clearing the box: the default.
		g.InstanceName = defaultGeneral.InstanceName
	}
	return g
}

// SaveGeneral stores the general settings an administrator submitted. A
// value equal to what is in force and not yet stored is still stored: the
// administrator has now chosen it, so a later change of default or
// environment must not move it.
func (s *Store) SaveGeneral(ctx context.Context, g General) error {
	return s.save(ctx, map[string]any{
		KeyInstanceName: g.InstanceName,
		KeyAllowSignup:  g.AllowSignup,
		KeySystemPrompt: g.SystemPrompt,
	})
}

// SystemPrompt is the instance's system prompt.
func (s *Store) SystemPrompt() string { return s.General().SystemPrompt }

// decode reads a stored value into dst, leaving dst alone when absent or
// unreadable (an unreadable value falls back to the default rather than
// taking the instance down). Caller holds mu.
func (s *Store) decode(key string, dst any) {
	if e, ok := s.stored[key]; ok {
		_ = json.Unmarshal([]byte(e.raw), dst)
	}
}

func (s *Store) save(ctx context.Context, values map[string]any) error {
	now := time.Now().UnixMilli()
	encoded := make(map[string]string, len(values))
	for k, v := range values {
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("settings: save %s: %w", k, err)
		}
		encoded[k] = string(raw)
	}
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		for k, raw := range encoded {
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO settings (key, value, source, updated_at) VALUES (?, ?, 'admin', ?)
				 ON CONFLICT(key) DO UPDATE SET value = excluded.value, source = 'admin', updated_at = excluded.updated_at`,
				k, raw, now); err != nil {
				return fmt.Errorf("settings: save %s: %w", k, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	for k, raw := range encoded {
		s.stored[k] = entry{raw: raw, source: FromAdmin}
	}
	s.mu.Unlock()
	return nil
}

// PermissionBaseline returns the permissions every account holds before any
// group widens them. The permission registry lives with accounts, which
// this package must not import, so the caller passes its defaults in: they
// are both the values of keys nobody has chosen and the list of keys that
// exist. A stored key missing from defaults (a permission since removed)
// is ignored.
//
// The setting is stored as one JSON object of key → bool holding the keys
// an administrator chose, so a permission added later starts at its own
// default rather than at whatever the last save implied.
func (s *Store) PermissionBaseline(defaults map[string]bool) map[string]bool {
	out := maps.Clone(defaults)
	if out == nil {
		out = map[string]bool{}
	}
	var stored map[string]bool
	s.mu.RLock()
	s.decode(KeyPermissionBaseline, &stored)
	s.mu.RUnlock()
	for k, v := range stored {
		if _, known := out[k]; known {
			out[k] = v
		}
	}
	return out
}

// SavePermissionBaseline stores an administrator's baseline. Only keys in
// defaults are written, and the stored object is replaced whole, so a key
// the code no longer knows is dropped here. A key of defaults that values
// leaves out is not stored and keeps following its default.
func (s *Store) SavePermissionBaseline(ctx context.Context, defaults, values map[string]bool) error {
	chosen := make(map[string]bool, len(values))
	for k, v := range values {
		if _, known := defaults[k]; known {
			chosen[k] = v
		}
	}
	return s.save(ctx, map[string]any{KeyPermissionBaseline: chosen})
}
