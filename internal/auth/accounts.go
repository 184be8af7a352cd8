// Package auth owns accounts and what they may do: registering, signing in
// and out, passwords (argon2id), server-side sessions, slowing down
// guessing, administering accounts, groups and their members, permissions
// (a baseline widened by groups, never narrowed) and quotas, and the usage
// those quotas are measured against. It holds all SQL that touches the
// users, sessions, groups, group_members and usage tables.
//
// It decides; it does not enforce. Whether a reply may start or a file may
// be attached is asked of it by the package doing that work.
package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"lembas/internal/db"
	"lembas/internal/fault"
	"lembas/internal/settings"
)

// User is an account.
type User struct {
	ID       string
	Username string
	IsAdmin  bool
	Disabled bool
	Theme    string // "" means the default theme
	// Timezone is an IANA zone name; "" means none chosen, and the
	// browser's zone is used.
	Timezone string
	// DefaultModelID is the model new chats start with; "" means none.
	// It is not checked against the models table, so it may name a model
	// since deleted: read that as none.
	DefaultModelID string
	CreatedAt      time.Time
}

// userColumns are the columns a User is loaded from, in userRow.dest's
// order. Every query that loads a User uses them, so a new field cannot be
// loaded in one place and forgotten in another.
func userColumns(alias string) string {
	cols := []string{"id", "username", "is_admin", "disabled", "theme", "timezone", "default_model_id", "created_at"}
	if alias != "" {
		for i, c := range cols {
			cols[i] = alias + "." + c
		}
	}
	return strings.Join(cols, ", ")
}

// userRow is the scan target for userColumns.
type userRow struct {
	u       User
	created int64
}

func (r *userRow) dest() []any {
	return []any{&r.u.ID, &r.u.Username, &r.u.IsAdmin, &r.u.Disabled, &r.u.Theme,
		&r.u.Timezone, &r.u.DefaultModelID, &r.created}
}

func (r *userRow) user() User {
	r.u.CreatedAt = db.Time(r.created)
	return r.u
}

// Themes are the built-in theme names.
var Themes = []string{"moria", "shire"}

// ValidTheme reports whether name is a theme an account may store.
func ValidTheme(name string) bool {
	for _, t := range Themes {
		if t == name {
			return true
		}
	}
	return false
}

// Service is the API for accounts, sessions, groups, permissions, quotas
// and usage.
type Service struct {
	db       *db.DB
	settings *settings.Store // nil: the permission baseline is the registry's defaults
	log      *slog.Logger
	hasher   *Hasher
	throttle *Throttle
	now      func() time.Time
	// dummyHash is verified against when a username does not exist, so a
	// sign-in for a missing account takes as long as one for a real one.
	// Made on first need: hashing at startup would add its cost to every
	// start.
	dummyOnce sync.Once
	dummyHash string
}

// Options tune a Service; tests use cheap hash parameters.
type Options struct {
	Params     Params
	Now        func() time.Time
	Concurrent int // hashes at once
	// Settings holds the instance's permission baseline. Without it the
	// baseline is the registry's defaults and SetBaseline refuses.
	Settings *settings.Store
	// Log receives what must not fail the caller (usage bookkeeping).
	// Nil means slog.Default().
	Log *slog.Logger
}

// New builds a Service.
func New(d *db.DB, opt Options) *Service {
	if opt.Params == (Params{}) {
		opt.Params = DefaultParams
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Concurrent == 0 {
		opt.Concurrent = 2
	}
	if opt.Log == nil {
		opt.Log = slog.Default()
	}
	return &Service{db: d, settings: opt.Settings, log: opt.Log,
		hasher: NewHasher(opt.Params, opt.Concurrent), throttle: NewThrottle(opt.Now), now: opt.Now}
}

const (
	MinPassword = 8
	MaxPassword = 1024 // bytes; argon2 would take anything, the form should not
	MaxUsername = 32
)

// ValidateUsername returns a field error when name is not acceptable.
func ValidateUsername(name string) error {
	switch {
	case name == "":
		return fault.Field("username", "Choose a username.")
	case utf8.RuneCountInString(name) > MaxUsername:
		return fault.Field("username", fmt.Sprintf("A username has at most %d characters.", MaxUsername))
	}
	for _, r := range name {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_' || r == '-') {
			return fault.Field("username", "A username may use letters, digits, dots, dashes and underscores.")
		}
	}
	return nil
}

// ValidatePassword returns a field error when pw is not acceptable.
func ValidatePassword(field, pw string) error {
	switch {
	case utf8.RuneCountInString(pw) < MinPassword:
		return fault.Field(field, fmt.Sprintf("A password needs at least %d characters.", MinPassword))
	case len(pw) > MaxPassword:
		return fault.Field(field, fmt.Sprintf("A password has at most %d bytes.", MaxPassword))
	}
	return nil
}

// ErrSignupClosed is returned by Register when the instance takes no new
// accounts.
var ErrSignupClosed = fault.New(fault.Forbidden, "This instance is not taking new accounts. Ask an administrator to create one for you.")

// Register creates an account. The first account on an instance becomes
// its administrator, decided in the same transaction that inserts it, so two
// simultaneous first registrations cannot both become one. Registration is
// always open while there are no accounts, whatever allowSignup says:
// otherwise a fresh instance with sign-up closed could never be entered.
func (s *Service) Register(ctx context.Context, username, password string, allowSignup bool) (User, error) {
	username = strings.TrimSpace(username)
	if err := ValidateUsername(username); err != nil {
		return User{}, err
	}
	if err := ValidatePassword("password", password); err != nil {
		return User{}, err
	}
	hash, err := s.hasher.Hash(ctx, password)
	if err != nil {
		return User{}, fmt.Errorf("auth: register: %w", err)
	}
	now := s.now()
	u := User{ID: db.NewID(), Username: username, CreatedAt: db.Time(now.UnixMilli())}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var existing int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`).Scan(&existing); err != nil {
			return err
		}
		if existing > 0 && !allowSignup {
			return ErrSignupClosed
		}
		u.IsAdmin = existing == 0
		return insertUser(ctx, tx, u, hash, now)
	})
	if err != nil {
		return User{}, err
	}
	return u, nil
}

func insertUser(ctx context.Context, tx *sql.Tx, u User, hash string, now time.Time) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO users (id, username, password_hash, is_admin, created_at, updated_at)
		 VALUES (?, ?, ?, ?, ?, ?)`,
		u.ID, u.Username, hash, u.IsAdmin, now.UnixMilli(), now.UnixMilli())
	if err != nil && isUniqueViolation(err) {
		return fault.Field("username", "That username is taken.")
	}
	return err
}

func isUniqueViolation(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// CreateOrPromoteAdmin makes username an administrator: it creates the
// account with password when it does not exist, and otherwise promotes it
// (setting the password too when one is given). created says which.
func (s *Service) CreateOrPromoteAdmin(ctx context.Context, username, password string) (created bool, err error) {
	username = strings.TrimSpace(username)
	if err := ValidateUsername(username); err != nil {
		return false, err
	}
	var hash string
	if password != "" {
		if err := ValidatePassword("password", password); err != nil {
			return false, err
		}
		if hash, err = s.hasher.Hash(ctx, password); err != nil {
			return false, err
		}
	}
	now := s.now()
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var id string
		err := tx.QueryRowContext(ctx, `SELECT id FROM users WHERE username = ?`, username).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			if hash == "" {
				return fault.Field("password", "A new account needs a password.")
			}
			created = true
			return insertUser(ctx, tx, User{ID: db.NewID(), Username: username, IsAdmin: true}, hash, now)
		}
		if err != nil {
			return err
		}
		if hash != "" {
			_, err = tx.ExecContext(ctx, `UPDATE users SET is_admin = 1, disabled = 0, password_hash = ?, updated_at = ? WHERE id = ?`, hash, now.UnixMilli(), id)
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE users SET is_admin = 1, disabled = 0, updated_at = ? WHERE id = ?`, now.UnixMilli(), id)
		}
		return err
	})
	return created, err
}

// ErrBadCredentials is the one answer for a wrong username or a wrong
// password, so the form does not tell which accounts exist.
var ErrBadCredentials = fault.New(fault.Invalid, "That username and password do not match.")

// ErrDisabled is returned when a disabled account signs in.
var ErrDisabled = fault.New(fault.Forbidden, "This account is disabled. Ask an administrator.")

// throttled says how long to wait before trying again.
func throttled(wait time.Duration) error {
	secs := int(wait.Round(time.Second) / time.Second)
	if secs < 1 {
		secs = 1
	}
	unit := "seconds"
	if secs == 1 {
		unit = "second"
	}
	return fault.Newf(fault.TooMany, "Too many failed sign-ins. Wait %d %s and try again.", secs, unit)
}

// Authenticate checks a username and password. addr is the client's
// address; failures are counted per account and per address.
func (s *Service) Authenticate(ctx context.Context, username, password, addr string) (User, error) {
	username = strings.TrimSpace(username)
	acctKey, addrKey := "user:"+strings.ToLower(username), "addr:"+addr
	if wait := s.throttle.Wait(acctKey, addrKey); wait > 0 {
		return User{}, throttled(wait)
	}
	var row userRow
	var hash string
	err := s.db.R.QueryRowContext(ctx,
		`SELECT password_hash, `+userColumns("")+` FROM users WHERE username = ?`,
		username).Scan(append([]any{&hash}, row.dest()...)...)
	if errors.Is(err, sql.ErrNoRows) {
		s.dummyOnce.Do(func() { s.dummyHash, _ = s.hasher.Hash(context.WithoutCancel(ctx), "not a password anyone has") })
		_, _ = s.hasher.Verify(ctx, s.dummyHash, password)
		s.throttle.Fail(acctKey, addrKey)
		return User{}, ErrBadCredentials
	}
	if err != nil {
		return User{}, fmt.Errorf("auth: authenticate: %w", err)
	}
	u := row.user()
	ok, err := s.hasher.Verify(ctx, hash, password)
	if err != nil {
		return User{}, fmt.Errorf("auth: authenticate %s: %w", u.ID, err)
	}
	if !ok {
		s.throttle.Fail(acctKey, addrKey)
		return User{}, ErrBadCredentials
	}
	if u.Disabled {
		return User{}, ErrDisabled
	}
	s.throttle.Succeed(acctKey)
	return u, nil
}

// ChangePassword replaces a password after checking the current one.
func (s *Service) ChangePassword(ctx context.Context, userID, current, next string) error {
	var hash string
	err := s.db.R.QueryRowContext(ctx, `SELECT password_hash FROM users WHERE id = ?`, userID).Scan(&hash)
	if err != nil {
		return fmt.Errorf("auth: change password: %w", err)
	}
	ok, err := s.hasher.Verify(ctx, hash, current)
	if err != nil {
		return fmt.Errorf("auth: change password: %w", err)
	}
	if !ok {
		return fault.Field("current_password", "That is not your current password.")
	}
	if err := ValidatePassword("new_password", next); err != nil {
		return err
	}
	newHash, err := s.hasher.Hash(ctx, next)
	if err != nil {
		return fmt.Errorf("auth: change password: %w", err)
	}
	_, err = s.db.W.ExecContext(ctx, `UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?`,
		newHash, s.now().UnixMilli(), userID)
	if err != nil {
		return fmt.Errorf("auth: change password: %w", err)
	}
	return nil
}

// SetTheme stores an account's theme.
func (s *Service) SetTheme(ctx context.Context, userID, theme string) error {
	if !ValidTheme(theme) {
		return fault.Field("theme", "Unknown theme.")
	}
	_, err := s.db.W.ExecContext(ctx, `UPDATE users SET theme = ?, updated_at = ? WHERE id = ?`,
		theme, s.now().UnixMilli(), userID)
	if err != nil {
		return fmt.Errorf("auth: set theme: %w", err)
	}
	return nil
}

// UserByID loads one account.
func (s *Service) UserByID(ctx context.Context, id string) (User, error) {
	var row userRow
	err := s.db.R.QueryRowContext(ctx,
		`SELECT `+userColumns("")+` FROM users WHERE id = ?`, id).Scan(row.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("auth: user %s: %w", id, fault.ErrNotFound)
	}
	if err != nil {
		return User{}, fmt.Errorf("auth: user %s: %w", id, err)
	}
	return row.user(), nil
}

// CountUsers returns how many accounts exist.
func (s *Service) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := s.db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("auth: count users: %w", err)
	}
	return n, nil
}
