package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // zone names validate in a container without /usr/share/zoneinfo
	"unicode/utf8"

	"lembas/internal/db"
	"lembas/internal/fault"
)

// Paging of ListUsers.
const (
	DefaultUserPage = 50
	MaxUserPage     = 500
)

// MaxModelID bounds a stored default model id; ours are UUIDs.
const MaxModelID = 100

// ErrLastAdmin refuses a change that would leave no administrator who can
// sign in. A disabled administrator does not count: an instance whose only
// administrators are disabled is one nobody can administer.
var ErrLastAdmin = fault.New(fault.Conflict,
	"That would leave the instance without an administrator. Make another account an administrator first.")

// ErrNotAdmin is returned when the account acting is not, at the moment of
// the change, an enabled administrator — for instance because another
// administrator demoted it a moment earlier.
var ErrNotAdmin = fault.New(fault.Forbidden, "Only an administrator can do that.")

func userNotFound(id string) error {
	return fmt.Errorf("auth: user %s: %w", id, fault.ErrNotFound)
}

func (s *Service) queryUsers(ctx context.Context, query string, args ...any) ([]User, error) {
	rows, err := s.db.R.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []User
	for rows.Next() {
		var row userRow
		if err := rows.Scan(row.dest()...); err != nil {
			return nil, err
		}
		out = append(out, row.user())
	}
	return out, rows.Err()
}

// ListUsers returns one page of accounts by username, those whose username
// contains query when it is not empty (case is ignored for ASCII letters),
// and how many accounts match in all. limit is clamped to 1…MaxUserPage,
// with DefaultUserPage for zero or less.
func (s *Service) ListUsers(ctx context.Context, query string, limit, offset int) ([]User, int, error) {
	if limit <= 0 {
		limit = DefaultUserPage
	}
	limit, offset = min(limit, MaxUserPage), max(offset, 0)
	where, args := "", []any{}
	if q := strings.TrimSpace(query); q != "" {
		where = ` WHERE username LIKE ? ESCAPE '\'`
		args = append(args, "%"+escapeLike(q)+"%")
	}
	var total int
	if err := s.db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("auth: list users: %w", err)
	}
	users, err := s.queryUsers(ctx,
		`SELECT `+userColumns("")+` FROM users`+where+` ORDER BY username, id LIMIT ? OFFSET ?`,
		append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("auth: list users: %w", err)
	}
	return users, total, nil
}

// escapeLike makes s match literally inside a LIKE pattern with ESCAPE '\'.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// CreateUser makes an account for somebody, as an administrator does. It
// ignores the sign-up switch: that closes the door to strangers, not to
// the people an administrator lets in.
func (s *Service) CreateUser(ctx context.Context, username, password string, admin bool) (User, error) {
	username = strings.TrimSpace(username)
	if err := ValidateUsername(username); err != nil {
		return User{}, err
	}
	if err := ValidatePassword("password", password); err != nil {
		return User{}, err
	}
	hash, err := s.hasher.Hash(ctx, password)
	if err != nil {
		return User{}, fmt.Errorf("auth: create user: %w", err)
	}
	now := s.now()
	u := User{ID: db.NewID(), Username: username, IsAdmin: admin, CreatedAt: db.Time(now.UnixMilli())}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error { return insertUser(ctx, tx, u, hash, now) })
	if err != nil {
		return User{}, fmt.Errorf("auth: create user: %w", err)
	}
	return u, nil
}

// adminChange runs change inside one write transaction after two checks
// made in that same transaction, so two administrators acting at once are
// judged one after the other:
//
//   - actorID must be an enabled administrator now, not merely when the
//     request began;
//   - when removing reports that the change takes userID out of the enabled
//     administrators (demoting, disabling or deleting), somebody else must
//     remain one.
func (s *Service) adminChange(ctx context.Context, actorID, userID string, removing bool, change func(tx *sql.Tx) error) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		var isAdmin, disabled bool
		err := tx.QueryRowContext(ctx, `SELECT is_admin, disabled FROM users WHERE id = ?`, actorID).Scan(&isAdmin, &disabled)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotAdmin
		}
		if err != nil {
			return err
		}
		if !isAdmin || disabled {
			return ErrNotAdmin
		}
		err = tx.QueryRowContext(ctx, `SELECT is_admin, disabled FROM users WHERE id = ?`, userID).Scan(&isAdmin, &disabled)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("user: %w", fault.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if removing && isAdmin && !disabled {
			var others int
			if err := tx.QueryRowContext(ctx,
				`SELECT COUNT(*) FROM users WHERE is_admin = 1 AND disabled = 0 AND id <> ?`, userID).Scan(&others); err != nil {
				return err
			}
			if others == 0 {
				return ErrLastAdmin
			}
		}
		return change(tx)
	})
}

// SetAdmin makes userID an administrator or takes the role away. The last
// enabled administrator cannot be demoted.
func (s *Service) SetAdmin(ctx context.Context, actorID, userID string, admin bool) error {
	err := s.adminChange(ctx, actorID, userID, !admin, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE users SET is_admin = ?, updated_at = ? WHERE id = ?`,
			admin, s.now().UnixMilli(), userID)
		return err
	})
	if err != nil {
		return fmt.Errorf("auth: set admin %s: %w", userID, err)
	}
	return nil
}

// SetDisabled disables or enables an account. Disabling also ends every
// session it has, so it is signed out at once rather than at its next
// request. The last enabled administrator cannot be disabled, not even by
// themselves.
func (s *Service) SetDisabled(ctx context.Context, actorID, userID string, disabled bool) error {
	err := s.adminChange(ctx, actorID, userID, disabled, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE users SET disabled = ?, updated_at = ? WHERE id = ?`,
			disabled, s.now().UnixMilli(), userID); err != nil {
			return err
		}
		if disabled {
			_, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ?`, userID)
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("auth: set disabled %s: %w", userID, err)
	}
	return nil
}

// DeleteUser deletes an account. Its sessions, memberships and usage
// cascade from users(id), as will the chats, files and other rows later
// features own, which must refer to users(id) with ON DELETE CASCADE. Rows
// that name a user without a foreign key (sharing's principal and the
// shares of this user's own rows) must be cleared here, before the delete,
// while they can still be found. The last enabled administrator cannot be
// deleted, not even by themselves.
func (s *Service) DeleteUser(ctx context.Context, actorID, userID string) error {
	err := s.adminChange(ctx, actorID, userID, true, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM users WHERE id = ?`, userID)
		return err
	})
	if err != nil {
		return fmt.Errorf("auth: delete user %s: %w", userID, err)
	}
	return nil
}

// ResetPassword sets a new password for somebody who lost theirs, and ends
// every session they have: whoever knew the old one is signed out too.
func (s *Service) ResetPassword(ctx context.Context, userID, newPassword string) error {
	if err := ValidatePassword("password", newPassword); err != nil {
		return err
	}
	hash, err := s.hasher.Hash(ctx, newPassword)
	if err != nil {
		return fmt.Errorf("auth: reset password: %w", err)
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?`,
			hash, s.now().UnixMilli(), userID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("user: %w", fault.ErrNotFound)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ?`, userID)
		return err
	})
	if err != nil {
		return fmt.Errorf("auth: reset password of %s: %w", userID, err)
	}
	return nil
}

// ValidateTimezone returns a field error unless name is "" (none chosen)
// or an IANA zone name. The zone database is compiled in (time/tzdata), so
// this holds on a machine without one.
func ValidateTimezone(name string) error {
	if name == "" {
		return nil
	}
	// "Local" is the server's zone, not a place anybody lives.
	if _, err := time.LoadLocation(name); err != nil || name == "Local" {
		return fault.Field("timezone", "Choose a time zone from the list.")
	}
	return nil
}

// SetPreferences stores an account's time zone and default model. The
// model id is not checked against the models, which a later package owns;
// one that names nothing reads as none.
func (s *Service) SetPreferences(ctx context.Context, userID, timezone, defaultModelID string) error {
	timezone, defaultModelID = strings.TrimSpace(timezone), strings.TrimSpace(defaultModelID)
	if err := ValidateTimezone(timezone); err != nil {
		return err
	}
	if utf8.RuneCountInString(defaultModelID) > MaxModelID {
		return fault.Field("default_model_id", "Choose a model from the list.")
	}
	res, err := s.db.W.ExecContext(ctx,
		`UPDATE users SET timezone = ?, default_model_id = ?, updated_at = ? WHERE id = ?`,
		timezone, defaultModelID, s.now().UnixMilli(), userID)
	if err != nil {
		return fmt.Errorf("auth: set preferences of %s: %w", userID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return userNotFound(userID)
	}
	return nil
}
