package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"lembas/internal/db"
	"lembas/internal/fault"
)

// Group widens what its members may do: the permissions it grants and the
// limits it states. A group never narrows anything.
type Group struct {
	ID          string
	Name        string
	Description string
	Grants      []string // registered permission keys, registry order
	Limits      Limits   // as stated by this group; unset axes have no opinion
	Members     int
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

const (
	MaxGroupName        = 64  // characters
	MaxGroupDescription = 500 // characters
)

// ValidateGroupName returns a field error when name is not acceptable.
func ValidateGroupName(name string) error {
	switch {
	case name == "":
		return fault.Field("name", "Give the group a name.")
	case utf8.RuneCountInString(name) > MaxGroupName:
		return fault.Field("name", fmt.Sprintf("A group name has at most %d characters.", MaxGroupName))
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return fault.Field("name", "A group name is one line of text.")
	}
	return nil
}

func validateGroupDescription(d string) error {
	if utf8.RuneCountInString(d) > MaxGroupDescription {
		return fault.Field("description", fmt.Sprintf("A description has at most %d characters.", MaxGroupDescription))
	}
	return nil
}

var errGroupNameTaken = fault.Field("name", "Another group already has that name.")

func groupNotFound(id string) error {
	return fmt.Errorf("auth: group %s: %w", id, fault.ErrNotFound)
}

// CreateGroup makes a group that grants nothing and states no limits.
// Names are unique regardless of case.
func (s *Service) CreateGroup(ctx context.Context, name, description string) (Group, error) {
	name, description = strings.TrimSpace(name), strings.TrimSpace(description)
	if err := ValidateGroupName(name); err != nil {
		return Group{}, err
	}
	if err := validateGroupDescription(description); err != nil {
		return Group{}, err
	}
	now := s.now()
	g := Group{ID: db.NewID(), Name: name, Description: description,
		CreatedAt: db.Time(now.UnixMilli()), UpdatedAt: db.Time(now.UnixMilli())}
	_, err := s.db.W.ExecContext(ctx,
		`INSERT INTO groups (id, name, description, permissions, limits, created_at, updated_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?)`,
		g.ID, g.Name, g.Description, encodeGrants(nil), encodeLimits(Limits{}), now.UnixMilli(), now.UnixMilli())
	if isUniqueViolation(err) {
		return Group{}, errGroupNameTaken
	}
	if err != nil {
		return Group{}, fmt.Errorf("auth: create group: %w", err)
	}
	return g, nil
}

// UpdateGroup renames and describes a group.
func (s *Service) UpdateGroup(ctx context.Context, id, name, description string) error {
	name, description = strings.TrimSpace(name), strings.TrimSpace(description)
	if err := ValidateGroupName(name); err != nil {
		return err
	}
	if err := validateGroupDescription(description); err != nil {
		return err
	}
	res, err := s.db.W.ExecContext(ctx,
		`UPDATE groups SET name = ?, description = ?, updated_at = ? WHERE id = ?`,
		name, description, s.now().UnixMilli(), id)
	if isUniqueViolation(err) {
		return errGroupNameTaken
	}
	return updatedOne(res, err, id)
}

// SetGroupGrants replaces the permissions a group grants with keys. The
// column is written whole from the typed value, which also drops any stored
// key the registry no longer has.
func (s *Service) SetGroupGrants(ctx context.Context, id string, keys []string) error {
	grants, err := grantsFromForm(keys)
	if err != nil {
		return err
	}
	res, err := s.db.W.ExecContext(ctx, `UPDATE groups SET permissions = ?, updated_at = ? WHERE id = ?`,
		encodeGrants(grants), s.now().UnixMilli(), id)
	return updatedOne(res, err, id)
}

// SetGroupLimits replaces the limits a group states, written whole.
func (s *Service) SetGroupLimits(ctx context.Context, id string, l Limits) error {
	for _, a := range axes {
		if v := *l.At(a.Key); v.Set && v.Value < 0 {
			return fault.Field(a.Key, "A limit cannot be negative.")
		}
	}
	res, err := s.db.W.ExecContext(ctx, `UPDATE groups SET limits = ?, updated_at = ? WHERE id = ?`,
		encodeLimits(l), s.now().UnixMilli(), id)
	return updatedOne(res, err, id)
}

func updatedOne(res sql.Result, err error, id string) error {
	if err != nil {
		return fmt.Errorf("auth: update group %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return groupNotFound(id)
	}
	return nil
}

// DeleteGroup deletes a group, and with it everything that named it: its
// memberships cascade, and so do the tables of later features that refer
// to groups(id) (model access). Any future table that names a group
// without a foreign key — sharing's principal column cannot have one — must
// be cleared here, before the delete, while its rows are still findable.
func (s *Service) DeleteGroup(ctx context.Context, id string) error {
	res, err := s.db.W.ExecContext(ctx, `DELETE FROM groups WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("auth: delete group %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return groupNotFound(id)
	}
	return nil
}

const groupColumns = `g.id, g.name, g.description, g.permissions, g.limits, g.created_at, g.updated_at,
	(SELECT COUNT(*) FROM group_members c WHERE c.group_id = g.id)`

type groupScanner interface{ Scan(dest ...any) error }

func scanGroup(row groupScanner) (Group, error) {
	var g Group
	var grants, limits string
	var created, updated int64
	if err := row.Scan(&g.ID, &g.Name, &g.Description, &grants, &limits, &created, &updated, &g.Members); err != nil {
		return Group{}, err
	}
	var err error
	if g.Grants, err = decodeGrants(grants); err != nil {
		return Group{}, fmt.Errorf("group %s: %w", g.ID, err)
	}
	if g.Limits, err = decodeLimits(limits); err != nil {
		return Group{}, fmt.Errorf("group %s: %w", g.ID, err)
	}
	g.CreatedAt, g.UpdatedAt = db.Time(created), db.Time(updated)
	return g, nil
}

// GroupByID loads one group.
func (s *Service) GroupByID(ctx context.Context, id string) (Group, error) {
	g, err := scanGroup(s.db.R.QueryRowContext(ctx, `SELECT `+groupColumns+` FROM groups g WHERE g.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Group{}, groupNotFound(id)
	}
	if err != nil {
		return Group{}, fmt.Errorf("auth: group %s: %w", id, err)
	}
	return g, nil
}

// ListGroups returns every group by name, with member counts.
func (s *Service) ListGroups(ctx context.Context) ([]Group, error) {
	gs, err := s.queryGroups(ctx, `SELECT `+groupColumns+` FROM groups g ORDER BY g.name, g.id`)
	if err != nil {
		return nil, fmt.Errorf("auth: list groups: %w", err)
	}
	return gs, nil
}

// GroupsOf returns the groups userID is in, by name. Membership is edited
// from the group's side only (AddMember, RemoveMember); this is the read.
func (s *Service) GroupsOf(ctx context.Context, userID string) ([]Group, error) {
	gs, err := s.queryGroups(ctx,
		`SELECT `+groupColumns+` FROM groups g JOIN group_members m ON m.group_id = g.id
		 WHERE m.user_id = ? ORDER BY g.name, g.id`, userID)
	if err != nil {
		return nil, fmt.Errorf("auth: groups of %s: %w", userID, err)
	}
	return gs, nil
}

func (s *Service) queryGroups(ctx context.Context, query string, args ...any) ([]Group, error) {
	rows, err := s.db.R.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Group
	for rows.Next() {
		g, err := scanGroup(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// AddMember puts userID in groupID. Adding a member twice is not an error.
func (s *Service) AddMember(ctx context.Context, groupID, userID string) error {
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM groups WHERE id = ?`, groupID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("group: %w", fault.ErrNotFound)
		}
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE id = ?`, userID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("user: %w", fault.ErrNotFound)
		}
		_, err := tx.ExecContext(ctx,
			`INSERT INTO group_members (group_id, user_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, groupID, userID)
		return err
	})
	if err != nil {
		return fmt.Errorf("auth: add %s to group %s: %w", userID, groupID, err)
	}
	return nil
}

// RemoveMember takes userID out of groupID. Removing somebody who is not a
// member is not an error: what was asked for is true.
func (s *Service) RemoveMember(ctx context.Context, groupID, userID string) error {
	_, err := s.db.W.ExecContext(ctx, `DELETE FROM group_members WHERE group_id = ? AND user_id = ?`, groupID, userID)
	if err != nil {
		return fmt.Errorf("auth: remove %s from group %s: %w", userID, groupID, err)
	}
	return nil
}

// Members returns a group's members by username.
func (s *Service) Members(ctx context.Context, groupID string) ([]User, error) {
	var n int
	if err := s.db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM groups WHERE id = ?`, groupID).Scan(&n); err != nil {
		return nil, fmt.Errorf("auth: members of %s: %w", groupID, err)
	}
	if n == 0 {
		return nil, groupNotFound(groupID)
	}
	users, err := s.queryUsers(ctx,
		`SELECT `+userColumns("u")+` FROM users u JOIN group_members m ON m.user_id = u.id
		 WHERE m.group_id = ? ORDER BY u.username, u.id`, groupID)
	if err != nil {
		return nil, fmt.Errorf("auth: members of %s: %w", groupID, err)
	}
	return users, nil
}
