package chat

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"lembas/internal/db"
	"lembas/internal/fault"
)

// Seed is what a new chat copies from its model: the administrator's
// defaults, applied once at creation.
type Seed struct {
	ModelID     string
	ModelName   string
	Effort      string // "" = none
	Temperature *float64
	TopP        *float64
	MaxTokens   *int
}

// Started is what Start wrote.
type Started struct {
	Chat      Chat
	User      Message
	Assistant Message
}

// Start writes a chat, its first message and the reply's placeholder in
// one transaction. Nothing exists before this: an abandoned composer
// leaves no row behind.
func (s *Service) Start(ctx context.Context, userID, content string, seed Seed) (Started, error) {
	content, err := validateContent(content)
	if err != nil {
		return Started{}, err
	}
	if seed.ModelID == "" {
		return Started{}, fault.Field("model", "Choose a model.")
	}
	if !ValidEffort(seed.Effort) {
		seed.Effort = ""
	}
	now := s.now().UnixMilli()
	c := Chat{ID: db.NewID(), UserID: userID, Kind: "chat", ModelID: seed.ModelID, Effort: seed.Effort,
		Temperature: seed.Temperature, TopP: seed.TopP, MaxTokens: seed.MaxTokens,
		CreatedAt: db.Time(now), UpdatedAt: db.Time(now), LastMessageAt: db.Time(now)}
	var out Started
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO chats (id, user_id, kind, model_id, effort, temperature, top_p, max_tokens, created_at, updated_at, last_message_at)
			 VALUES (?, ?, 'chat', ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.ID, userID, c.ModelID, nullString(c.Effort), nullable(c.Temperature), nullable(c.TopP), nullable(c.MaxTokens),
			now, now, now); err != nil {
			return fmt.Errorf("chat: start: %w", err)
		}
		u, a, err := insertExchange(ctx, tx, c.ID, content, StatusDone, seed.ModelID, seed.ModelName, now)
		out = Started{Chat: c, User: u, Assistant: a}
		return err
	})
	return out, err
}

// insertExchange writes a user turn and, when the turn is sent now, the
// reply's placeholder a millisecond later, so the reply sorts after it.
func insertExchange(ctx context.Context, tx *sql.Tx, chatID, content, userStatus, modelID, modelName string, now int64) (Message, Message, error) {
	u := Message{ID: db.NewID(), ChatID: chatID, Role: RoleUser, Content: content, Status: userStatus,
		CreatedAt: db.Time(now), UpdatedAt: db.Time(now)}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO messages (id, chat_id, role, content, status, created_at, updated_at) VALUES (?, ?, 'user', ?, ?, ?, ?)`,
		u.ID, chatID, content, userStatus, now, now); err != nil {
		return Message{}, Message{}, fmt.Errorf("chat: insert turn: %w", err)
	}
	if userStatus == StatusQueued {
		return u, Message{}, nil
	}
	a, err := insertPlaceholder(ctx, tx, chatID, modelID, modelName, now+1)
	return u, a, err
}

func insertPlaceholder(ctx context.Context, tx *sql.Tx, chatID, modelID, modelName string, at int64) (Message, error) {
	a := Message{ID: db.NewID(), ChatID: chatID, Role: RoleAssistant, Status: StatusStreaming, ModelID: modelID,
		ModelName: modelName, CreatedAt: db.Time(at), UpdatedAt: db.Time(at)}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO messages (id, chat_id, role, status, model_id, model_name, created_at, updated_at)
		 VALUES (?, ?, 'assistant', 'streaming', ?, ?, ?, ?)`,
		a.ID, chatID, modelID, modelName, at, at); err != nil {
		return Message{}, fmt.Errorf("chat: insert reply: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE chats SET last_message_at = ?, updated_at = ? WHERE id = ?`, at, at, chatID); err != nil {
		return Message{}, fmt.Errorf("chat: touch: %w", err)
	}
	return a, nil
}

// Sent is what Send wrote. Assistant is zero when the turn was queued.
type Sent struct {
	User      Message
	Assistant Message
	Queued    bool
}

// Send adds a person's turn to their chat. While a reply is being
// written the turn is queued (a real row, visible and withdrawable, that
// survives a restart) and delivered when that reply ends: a chat never has
// two replies running.
func (s *Service) Send(ctx context.Context, userID, chatID, content, modelName string) (Sent, error) {
	content, err := validateContent(content)
	if err != nil {
		return Sent{}, err
	}
	var out Sent
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var modelID string
		err := tx.QueryRowContext(ctx, `SELECT model_id FROM chats WHERE id = ? AND user_id = ?`, chatID, userID).Scan(&modelID)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(chatID)
		}
		if err != nil {
			return err
		}
		var busy int
		if err := tx.QueryRowContext(ctx,
			`SELECT COUNT(*) FROM messages WHERE chat_id = ? AND (status = 'streaming' OR status = 'queued')`, chatID).Scan(&busy); err != nil {
			return err
		}
		status := StatusDone
		if busy > 0 {
			status = StatusQueued
		}
		now := s.now().UnixMilli()
		u, a, err := insertExchange(ctx, tx, chatID, content, status, modelID, modelName, now)
		out = Sent{User: u, Assistant: a, Queued: status == StatusQueued}
		if err == nil && out.Queued {
			_, err = tx.ExecContext(ctx, `UPDATE chats SET last_message_at = ?, updated_at = ? WHERE id = ?`, now, now, chatID)
		}
		return err
	})
	return out, err
}

// Withdraw deletes a queued turn before it is sent.
func (s *Service) Withdraw(ctx context.Context, userID, chatID, messageID string) error {
	res, err := s.db.W.ExecContext(ctx,
		`DELETE FROM messages WHERE id = ? AND chat_id = ? AND status = 'queued'
		 AND chat_id IN (SELECT id FROM chats WHERE user_id = ?)`, messageID, chatID, userID)
	if err != nil {
		return fmt.Errorf("chat: withdraw: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound(messageID)
	}
	return nil
}

// DeliverNext takes the oldest queued turn of a chat, marks it sent and
// writes the reply's placeholder: one turn, not all of them, or the next
// request would carry two user turns in a row. ok is false when nothing
// waits, or when a reply is already being written.
func (s *Service) DeliverNext(ctx context.Context, chatID, modelName string) (next Message, ok bool, err error) {
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var busy int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages WHERE chat_id = ? AND status = 'streaming'`, chatID).Scan(&busy); err != nil {
			return err
		}
		if busy > 0 {
			return nil
		}
		var id, modelID string
		err := tx.QueryRowContext(ctx,
			`SELECT m.id, c.model_id FROM messages m JOIN chats c ON c.id = m.chat_id
			 WHERE m.chat_id = ? AND m.status = 'queued' ORDER BY m.created_at, m.id LIMIT 1`, chatID).Scan(&id, &modelID)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		now := s.now().UnixMilli()
		// The turn is sent now: it moves to now, after everything already
		// in the transcript, and the reply follows it.
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET status = 'done', created_at = ?, updated_at = ? WHERE id = ?`, now, now, id); err != nil {
			return err
		}
		next, err = insertPlaceholder(ctx, tx, chatID, modelID, modelName, now+1)
		ok = err == nil
		return err
	})
	if err != nil {
		return Message{}, false, fmt.Errorf("chat: deliver next of %s: %w", chatID, err)
	}
	return next, ok, nil
}

// Rewind rewrites one of the person's own turns and deletes everything
// after it, then writes a new placeholder: the conversation runs on from
// there. It does not branch.
func (s *Service) Rewind(ctx context.Context, userID, chatID, messageID, content, modelName string) (Message, error) {
	content, err := validateContent(content)
	if err != nil {
		return Message{}, err
	}
	var placeholder Message
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var role, status, modelID string
		var created int64
		err := tx.QueryRowContext(ctx,
			`SELECT m.role, m.status, m.created_at, c.model_id FROM messages m JOIN chats c ON c.id = m.chat_id
			 WHERE m.id = ? AND m.chat_id = ? AND c.user_id = ?`, messageID, chatID, userID).Scan(&role, &status, &created, &modelID)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(messageID)
		}
		if err != nil {
			return err
		}
		if role != RoleUser || status == StatusQueued {
			return fault.New(fault.Invalid, "Only a turn you sent can be edited.")
		}
		if _, err := tx.ExecContext(ctx,
			`DELETE FROM messages WHERE chat_id = ? AND (created_at > ? OR (created_at = ? AND id > ?))`,
			chatID, created, created, messageID); err != nil {
			return err
		}
		now := s.now().UnixMilli()
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET content = ?, updated_at = ? WHERE id = ?`, content, now, messageID); err != nil {
			return err
		}
		placeholder, err = insertPlaceholder(ctx, tx, chatID, modelID, modelName, max(now, created+1))
		return err
	})
	if err != nil {
		return Message{}, err
	}
	return placeholder, nil
}

// ResetReply empties a reply so it can be written again (Regenerate): the
// same row, so the transcript keeps its place. Only the last reply of a
// chat can be regenerated; queued turns after it stay queued.
func (s *Service) ResetReply(ctx context.Context, userID, chatID, messageID, modelName string) (Message, error) {
	var out Message
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var role, modelID string
		var created int64
		err := tx.QueryRowContext(ctx,
			`SELECT m.role, m.created_at, c.model_id FROM messages m JOIN chats c ON c.id = m.chat_id
			 WHERE m.id = ? AND m.chat_id = ? AND c.user_id = ?`, messageID, chatID, userID).Scan(&role, &created, &modelID)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(messageID)
		}
		if err != nil {
			return err
		}
		if role != RoleAssistant {
			return fault.New(fault.Invalid, "Only a reply can be regenerated.")
		}
		var later int
		if err := tx.QueryRowContext(ctx,
			`SELECT COUNT(*) FROM messages WHERE chat_id = ? AND status <> 'queued' AND (created_at > ? OR (created_at = ? AND id > ?))`,
			chatID, created, created, messageID).Scan(&later); err != nil {
			return err
		}
		if later > 0 {
			return fault.New(fault.Invalid, "Only the last reply can be regenerated. To go back further, edit your turn.")
		}
		now := s.now().UnixMilli()
		if _, err := tx.ExecContext(ctx,
			`UPDATE messages SET content = '', html = '', reasoning = '', reasoning_html = '', reasoning_ms = 0, status = 'streaming', error = '',
			 model_id = ?, model_name = ?, prompt_tokens = NULL, completion_tokens = NULL, context_tokens = NULL, tokens_estimated = 0,
			 context_length = 0, ttft_ms = NULL, duration_ms = NULL, updated_at = ? WHERE id = ?`,
			modelID, modelName, now, messageID); err != nil {
			return err
		}
		out, err = scanMessage(tx.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM messages WHERE id = ?`, messageID))
		return err
	})
	return out, err
}

// SavePartial stores what a reply has so far, so a crash loses seconds,
// not the reply. It writes only while the reply is still being written.
func (s *Service) SavePartial(ctx context.Context, messageID, content, reasoning string) error {
	_, err := s.db.W.ExecContext(ctx,
		`UPDATE messages SET content = ?, reasoning = ?, updated_at = ? WHERE id = ? AND status = 'streaming'`,
		content, reasoning, s.now().UnixMilli(), messageID)
	if err != nil {
		return fmt.Errorf("chat: save partial %s: %w", messageID, err)
	}
	return nil
}

// Final is everything a finished reply stores.
type Final struct {
	Content       string
	HTML          string
	Reasoning     string
	ReasoningHTML string
	ReasoningMS   int64
	Status        string // done, stopped or error
	Error         string
	Metrics       Metrics
}

// Finish stores a finished reply. It writes only a reply still marked as
// being written, so a reply that was regenerated meanwhile (reset by
// another generation) is not overwritten by its cancelled predecessor;
// ok says whether it wrote.
func (s *Service) Finish(ctx context.Context, messageID string, f Final) (ok bool, err error) {
	now := s.now().UnixMilli()
	res, err := s.db.W.ExecContext(ctx,
		`UPDATE messages SET content = ?, html = ?, reasoning = ?, reasoning_html = ?, reasoning_ms = ?, status = ?, error = ?,
		 prompt_tokens = ?, completion_tokens = ?, context_tokens = ?, tokens_estimated = ?, context_length = ?, ttft_ms = ?, duration_ms = ?,
		 updated_at = ? WHERE id = ? AND status = 'streaming'`,
		f.Content, f.HTML, f.Reasoning, f.ReasoningHTML, f.ReasoningMS, f.Status, f.Error,
		nullable(f.Metrics.PromptTokens), nullable(f.Metrics.CompletionTokens), nullable(f.Metrics.ContextTokens), f.Metrics.Estimated, f.Metrics.ContextLength,
		nullable(f.Metrics.TTFT), nullable(f.Metrics.Duration), now, messageID)
	if err != nil {
		return false, fmt.Errorf("chat: finish %s: %w", messageID, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// MarkInterrupted marks every reply still being written as interrupted:
// at startup, nothing is writing them any more. What they had is kept.
func (s *Service) MarkInterrupted(ctx context.Context) (int, error) {
	res, err := s.db.W.ExecContext(ctx,
		`UPDATE messages SET status = 'interrupted', error = 'The server stopped while this reply was being written.', updated_at = ?
		 WHERE status = 'streaming'`, s.now().UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("chat: mark interrupted: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// Streaming returns the id of the reply being written in a chat, if any.
func (s *Service) Streaming(ctx context.Context, chatID string) (string, bool, error) {
	var id string
	err := s.db.R.QueryRowContext(ctx,
		`SELECT id FROM messages WHERE chat_id = ? AND status = 'streaming' ORDER BY created_at DESC LIMIT 1`, chatID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("chat: streaming of %s: %w", chatID, err)
	}
	return id, true, nil
}
