package catalog

import (
	"context"
	"fmt"

	"lembas/internal/auth"
)

// PickerModel is what the model picker shows for one model.
type PickerModel struct {
	ID             string
	Name           string // display name, or the upstream name without one
	UpstreamName   string
	Description    string
	AvatarURL      string // "" without a picture
	Caps           Caps
	Badges         []string // Caps.Badges(), ready for a template
	ContextLength  int      // 0 = unknown
	ConnectionName string
	Pinned         bool
	IsDefault      bool // the instance default
}

// usable is the condition shared by every access question: the model and
// its connection are switched on, the server still lists the model, and the
// person is an administrator (?1), or the model is open to everyone, or
// they are in one of its groups (?2 is their id). Groups only grant: a
// model's groups narrow it to their members, and membership of any one is
// enough.
const usable = ` m.enabled = 1 AND m.available = 1 AND c.enabled = 1
	AND (?1 = 1
	     OR NOT EXISTS (SELECT 1 FROM model_groups mg WHERE mg.model_id = m.id)
	     OR EXISTS (SELECT 1 FROM model_groups mg JOIN group_members gm ON gm.group_id = mg.group_id
	                WHERE mg.model_id = m.id AND gm.user_id = ?2))`

// inPicker adds what the picker leaves out: hidden models and models that
// only serve embeddings.
const inPicker = ` AND m.hidden = 0 AND m.embedding = 0`

const pickerColumns = `m.id, m.display_name, m.upstream_name, m.description, m.avatar_file,
	m.vision, m.tools, m.reasoning, m.embedding, m.context_length, c.name, m.pinned, m.is_default`

func (s *Service) picker(ctx context.Context, user auth.User, extra string) ([]PickerModel, error) {
	if user.ID == "" || user.Disabled {
		return nil, nil
	}
	rows, err := s.db.R.QueryContext(ctx,
		`SELECT `+pickerColumns+modelFrom+` WHERE`+usable+inPicker+extra+` ORDER BY m.position, m.id`,
		boolInt(user.IsAdmin), user.ID)
	if err != nil {
		return nil, fmt.Errorf("catalog: models for %s: %w", user.ID, err)
	}
	defer rows.Close()
	var out []PickerModel
	for rows.Next() {
		var p PickerModel
		var display, avatar string
		if err := rows.Scan(&p.ID, &display, &p.UpstreamName, &p.Description, &avatar,
			&p.Caps.Vision, &p.Caps.Tools, &p.Caps.Reasoning, &p.Caps.Embedding, &p.ContextLength,
			&p.ConnectionName, &p.Pinned, &p.IsDefault); err != nil {
			return nil, fmt.Errorf("catalog: models for %s: %w", user.ID, err)
		}
		p.Name = display
		if p.Name == "" {
			p.Name = p.UpstreamName
		}
		p.AvatarURL = avatarURL(p.ID, avatar)
		p.Badges = p.Caps.Badges()
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("catalog: models for %s: %w", user.ID, err)
	}
	return out, nil
}

// VisibleTo returns the models user may pick, in the administrator's
// order (pinning does not change it): enabled, still listed upstream, on an
// enabled connection, not hidden, not embedding-only, and open to everyone
// or to a group user is in. Administrators see every such model whatever
// its groups. A disabled account sees none.
func (s *Service) VisibleTo(ctx context.Context, user auth.User) ([]PickerModel, error) {
	return s.picker(ctx, user, "")
}

// Pinned returns the sidebar's shortcuts: the pinned models among those
// VisibleTo returns, in the same order.
func (s *Service) Pinned(ctx context.Context, user auth.User) ([]PickerModel, error) {
	return s.picker(ctx, user, " AND m.pinned = 1")
}

// CanUse reports whether a request from user may go to modelID. It is
// VisibleTo without the picker's two exclusions: a hidden model stays
// usable, because hiding takes a model out of the picker, not out of
// service (the system may choose it, as for titles), and an embedding
// model is usable for embeddings. Note what follows: a person who sends a
// hidden model's id gets it. Restrict by group to keep a model from people.
func (s *Service) CanUse(ctx context.Context, user auth.User, modelID string) (bool, error) {
	if user.ID == "" || user.Disabled {
		return false, nil
	}
	var n int
	err := s.db.R.QueryRowContext(ctx,
		`SELECT COUNT(*)`+modelFrom+` WHERE m.id = ?3 AND`+usable,
		boolInt(user.IsAdmin), user.ID, modelID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("catalog: can %s use %s: %w", user.ID, modelID, err)
	}
	return n > 0, nil
}

// Default picks the model a new chat starts with for user: their own
// default (user.DefaultModelID) when they may still pick it, else the
// instance default when they may, else the first model they may pick. ok
// is false when they may pick none.
func (s *Service) Default(ctx context.Context, user auth.User) (m PickerModel, ok bool, err error) {
	visible, err := s.VisibleTo(ctx, user)
	if err != nil || len(visible) == 0 {
		return PickerModel{}, false, err
	}
	if user.DefaultModelID != "" {
		for _, v := range visible {
			if v.ID == user.DefaultModelID {
				return v, true, nil
			}
		}
	}
	for _, v := range visible {
		if v.IsDefault {
			return v, true, nil
		}
	}
	return visible[0], true, nil
}
