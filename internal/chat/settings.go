package chat

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"lembas/internal/fault"
)

// MaxTitle bounds a chat's title.
const MaxTitle = 120

// MaxSystemPrompt bounds a chat's own system prompt.
const MaxSystemPrompt = 20_000

// Rename sets a chat's title as the person chose it; an automatic title
// never replaces it afterwards.
func (s *Service) Rename(ctx context.Context, userID, chatID, title string) (Chat, error) {
	// Another account's chat is not found, whatever the title says.
	if _, err := s.Get(ctx, userID, chatID); err != nil {
		return Chat{}, err
	}
	title = strings.Join(strings.Fields(title), " ")
	if title == "" {
		return Chat{}, fault.Field("title", "A title cannot be empty.")
	}
	if utf8.RuneCountInString(title) > MaxTitle {
		return Chat{}, fault.Field("title", fmt.Sprintf("A title has at most %d characters.", MaxTitle))
	}
	res, err := s.db.W.ExecContext(ctx,
		`UPDATE chats SET title = ?, title_source = 'user', updated_at = ? WHERE id = ? AND user_id = ?`,
		title, s.now().UnixMilli(), chatID, userID)
	if err != nil {
		return Chat{}, fmt.Errorf("chat: rename: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Chat{}, notFound(chatID)
	}
	return s.Get(ctx, userID, chatID)
}

// SetMadeTitle stores a title that was made for the chat (by a model, or
// from the first prompt), unless the chat already has one.
func (s *Service) SetMadeTitle(ctx context.Context, chatID, title, source string) (bool, error) {
	res, err := s.db.W.ExecContext(ctx,
		`UPDATE chats SET title = ?, title_source = ?, updated_at = ? WHERE id = ? AND title_source = ''`,
		title, source, s.now().UnixMilli(), chatID)
	if err != nil {
		return false, fmt.Errorf("chat: set title: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// Settings is the chat settings panel as submitted. A nil field is not
// changed; an empty string clears. Numbers come as text so a bad one can
// be named.
type Settings struct {
	SystemPrompt *string
	Effort       *string
	ModelID      *string
	Temperature  *string
	TopP         *string
	MaxTokens    *string
	// ModelSeed supplies the new model's defaults when ModelID changes:
	// effort is seeded only when the chat has none.
	ModelSeed *Seed
}

// UpdateSettings changes a chat's own settings.
func (s *Service) UpdateSettings(ctx context.Context, userID, chatID string, in Settings) (Chat, error) {
	c, err := s.Get(ctx, userID, chatID)
	if err != nil {
		return Chat{}, err
	}
	if in.SystemPrompt != nil {
		if utf8.RuneCountInString(*in.SystemPrompt) > MaxSystemPrompt {
			return Chat{}, fault.Field("system_prompt", fmt.Sprintf("A system prompt has at most %d characters.", MaxSystemPrompt))
		}
		c.SystemPrompt = strings.TrimSpace(*in.SystemPrompt)
	}
	if in.Effort != nil {
		if !ValidEffort(*in.Effort) {
			return Chat{}, fault.Field("effort", "Choose low, medium, high, off, or none.")
		}
		c.Effort, c.EffortChosen = *in.Effort, true
	}
	if in.ModelID != nil && *in.ModelID != c.ModelID {
		if *in.ModelID == "" {
			return Chat{}, fault.Field("model", "Choose a model.")
		}
		c.ModelID = *in.ModelID
		// A model change seeds effort only when the chat has none and the
		// person never chose one here: a cleared effort is a choice, and
		// the new model's default must not resurrect underneath it.
		if in.ModelSeed != nil && c.Effort == "" && !c.EffortChosen {
			c.Effort = in.ModelSeed.Effort
		}
	}
	if in.Temperature != nil {
		if c.Temperature, err = optionalFloat(*in.Temperature, "temperature", 0, 2); err != nil {
			return Chat{}, err
		}
	}
	if in.TopP != nil {
		if c.TopP, err = optionalFloat(*in.TopP, "top_p", 0, 1); err != nil {
			return Chat{}, err
		}
	}
	if in.MaxTokens != nil {
		v := strings.TrimSpace(*in.MaxTokens)
		if v == "" {
			c.MaxTokens = nil
		} else {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1_000_000 {
				return Chat{}, fault.Field("max_tokens", "Max tokens is a whole number from 1 to 1,000,000, or empty.")
			}
			c.MaxTokens = &n
		}
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE chats SET system_prompt = ?, effort = ?, effort_chosen = ?, model_id = ?, temperature = ?, top_p = ?, max_tokens = ?, updated_at = ?
			 WHERE id = ? AND user_id = ?`,
			c.SystemPrompt, nullString(c.Effort), c.EffortChosen, c.ModelID, nullable(c.Temperature), nullable(c.TopP), nullable(c.MaxTokens),
			s.now().UnixMilli(), chatID, userID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound(chatID)
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return Chat{}, err
		}
		return Chat{}, fmt.Errorf("chat: settings: %w", err)
	}
	return s.Get(ctx, userID, chatID)
}

func optionalFloat(v, field string, lo, hi float64) (*float64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < lo || f > hi {
		return nil, fault.Field(field, fmt.Sprintf("Use a number from %g to %g, or leave it empty.", lo, hi))
	}
	return &f, nil
}

// Delete removes a chat and its messages.
func (s *Service) Delete(ctx context.Context, userID, chatID string) error {
	res, err := s.db.W.ExecContext(ctx, `DELETE FROM chats WHERE id = ? AND user_id = ?`, chatID, userID)
	if err != nil {
		return fmt.Errorf("chat: delete: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound(chatID)
	}
	return nil
}
