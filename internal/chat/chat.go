// Package chat owns chats and their messages: creating a chat with its
// first turn, sending, queueing while a reply is written, rewinding,
// regenerating, titles, per-chat settings, and building the request a
// reply sends upstream (the system-prompt ladder, the model's parameters,
// effort, and which turns are context). It holds all SQL touching the
// chats and messages tables.
//
// Who is asking is always an argument: every function that reads or
// changes a chat on a person's behalf takes their user id and answers
// "not found" for a chat that is not theirs.
package chat

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"lembas/internal/db"
	"lembas/internal/fault"
)

// Message statuses.
const (
	StatusDone        = "done"        // a sent user turn; a finished reply
	StatusQueued      = "queued"      // a user turn waiting for the reply in progress
	StatusStreaming   = "streaming"   // a reply being written
	StatusStopped     = "stopped"     // a reply the person stopped; what arrived is kept
	StatusError       = "error"       // a reply the upstream failed
	StatusInterrupted = "interrupted" // a reply cut off by the server stopping
)

// Roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Efforts a chat can carry; "" means none is sent.
var Efforts = []string{"low", "medium", "high", "off"}

// ValidEffort reports whether e is "" or one of Efforts.
func ValidEffort(e string) bool {
	if e == "" {
		return true
	}
	for _, x := range Efforts {
		if x == e {
			return true
		}
	}
	return false
}

// MaxContent bounds one message a person writes.
const MaxContent = 200_000

// Chat is one conversation.
type Chat struct {
	ID            string
	UserID        string
	Title         string
	TitleSource   string // "", "auto", "prompt" or "user"
	Kind          string
	ModelID       string
	SystemPrompt  string
	Effort        string // "" = none
	EffortChosen  bool   // the person set (or cleared) the effort here
	Temperature   *float64
	TopP          *float64
	MaxTokens     *int
	CreatedAt     time.Time
	UpdatedAt     time.Time
	LastMessageAt time.Time
}

// DisplayTitle is the title, or a stand-in before one is made.
func (c Chat) DisplayTitle() string {
	if c.Title != "" {
		return c.Title
	}
	return "New chat"
}

// Metrics describe one reply. Nil counts are unknown.
type Metrics struct {
	PromptTokens     *int // every request of the reply, added up: what it cost
	CompletionTokens *int
	// ContextTokens is what the conversation occupies after the reply:
	// the last request's prompt plus what it wrote.
	ContextTokens *int
	// Estimated means the counts were estimated (four characters to a
	// token) because the server reported none: shown with "~".
	Estimated     bool
	ContextLength int    // the model's window when the reply was made; 0 = unknown
	TTFT          *int64 // milliseconds to the first token
	Duration      *int64 // milliseconds from request to the end
}

// Message is one turn.
type Message struct {
	ID            string
	ChatID        string
	Role          string
	Content       string
	HTML          string
	Reasoning     string
	ReasoningHTML string // rendered once when the reply finished
	ReasoningMS   int64
	Status        string
	Error         string
	ModelID       string
	ModelName     string
	Metrics       Metrics
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Finished reports whether a reply is no longer being written.
func (m Message) Finished() bool { return m.Status != StatusStreaming }

// Service is the chat API.
type Service struct {
	db  *db.DB
	now func() time.Time
}

// New builds a Service. now may be nil.
func New(d *db.DB, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{db: d, now: now}
}

// ErrNotFound is what a person gets for a chat or message that does not
// exist or is not theirs: the two are indistinguishable on purpose.
var ErrNotFound = fault.New(fault.NotFound, "That chat does not exist, or is not yours.")

func notFound(what string) error { return fmt.Errorf("chat: %s: %w", what, ErrNotFound) }

const chatColumns = `id, user_id, title, title_source, kind, model_id, system_prompt, effort, effort_chosen,
	temperature, top_p, max_tokens, created_at, updated_at, last_message_at`

type scanner interface{ Scan(dest ...any) error }

func scanChat(sc scanner) (Chat, error) {
	var c Chat
	var effort sql.NullString
	var temp, topP sql.NullFloat64
	var maxTok sql.NullInt64
	var created, updated, last int64
	if err := sc.Scan(&c.ID, &c.UserID, &c.Title, &c.TitleSource, &c.Kind, &c.ModelID, &c.SystemPrompt, &effort, &c.EffortChosen,
		&temp, &topP, &maxTok, &created, &updated, &last); err != nil {
		return Chat{}, err
	}
	c.Effort = effort.String
	if temp.Valid {
		c.Temperature = &temp.Float64
	}
	if topP.Valid {
		c.TopP = &topP.Float64
	}
	if maxTok.Valid {
		n := int(maxTok.Int64)
		c.MaxTokens = &n
	}
	c.CreatedAt, c.UpdatedAt, c.LastMessageAt = db.Time(created), db.Time(updated), db.Time(last)
	return c, nil
}

const messageColumns = `id, chat_id, role, content, html, reasoning, reasoning_html, reasoning_ms, status, error, model_id, model_name,
	prompt_tokens, completion_tokens, context_tokens, tokens_estimated, context_length, ttft_ms, duration_ms, created_at, updated_at`

func scanMessage(sc scanner) (Message, error) {
	var m Message
	var prompt, completion, contextTokens, ttft, duration sql.NullInt64
	var created, updated int64
	if err := sc.Scan(&m.ID, &m.ChatID, &m.Role, &m.Content, &m.HTML, &m.Reasoning, &m.ReasoningHTML, &m.ReasoningMS, &m.Status, &m.Error,
		&m.ModelID, &m.ModelName, &prompt, &completion, &contextTokens, &m.Metrics.Estimated, &m.Metrics.ContextLength, &ttft, &duration,
		&created, &updated); err != nil {
		return Message{}, err
	}
	if prompt.Valid {
		n := int(prompt.Int64)
		m.Metrics.PromptTokens = &n
	}
	if completion.Valid {
		n := int(completion.Int64)
		m.Metrics.CompletionTokens = &n
	}
	if contextTokens.Valid {
		n := int(contextTokens.Int64)
		m.Metrics.ContextTokens = &n
	}
	if ttft.Valid {
		m.Metrics.TTFT = &ttft.Int64
	}
	if duration.Valid {
		m.Metrics.Duration = &duration.Int64
	}
	m.CreatedAt, m.UpdatedAt = db.Time(created), db.Time(updated)
	return m, nil
}

// Get returns userID's chat.
func (s *Service) Get(ctx context.Context, userID, chatID string) (Chat, error) {
	c, err := scanChat(s.db.R.QueryRowContext(ctx,
		`SELECT `+chatColumns+` FROM chats WHERE id = ? AND user_id = ?`, chatID, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return Chat{}, notFound(chatID)
	}
	if err != nil {
		return Chat{}, fmt.Errorf("chat: get %s: %w", chatID, err)
	}
	return c, nil
}

// List returns userID's most recent chats.
func (s *Service) List(ctx context.Context, userID string, limit int) ([]Chat, error) {
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	rows, err := s.db.R.QueryContext(ctx,
		`SELECT `+chatColumns+` FROM chats WHERE user_id = ? ORDER BY last_message_at DESC, id DESC LIMIT ?`, userID, limit)
	if err != nil {
		return nil, fmt.Errorf("chat: list: %w", err)
	}
	defer rows.Close()
	var out []Chat
	for rows.Next() {
		c, err := scanChat(rows)
		if err != nil {
			return nil, fmt.Errorf("chat: list: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Messages returns a chat's turns in order, queued turns last: they are
// waiting to be sent, after whatever is being written now. The caller has
// already checked the chat is the person's (Get).
func (s *Service) Messages(ctx context.Context, chatID string) ([]Message, error) {
	rows, err := s.db.R.QueryContext(ctx,
		`SELECT `+messageColumns+` FROM messages WHERE chat_id = ? ORDER BY status = 'queued', created_at, id`, chatID)
	if err != nil {
		return nil, fmt.Errorf("chat: messages of %s: %w", chatID, err)
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, fmt.Errorf("chat: messages of %s: %w", chatID, err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// Message returns one message of userID's chat.
func (s *Service) Message(ctx context.Context, userID, chatID, messageID string) (Message, error) {
	m, err := scanMessage(s.db.R.QueryRowContext(ctx,
		`SELECT `+prefixed("m.", messageColumns)+` FROM messages m JOIN chats c ON c.id = m.chat_id
		 WHERE m.id = ? AND m.chat_id = ? AND c.user_id = ?`, messageID, chatID, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return Message{}, notFound(messageID)
	}
	if err != nil {
		return Message{}, fmt.Errorf("chat: message %s: %w", messageID, err)
	}
	return m, nil
}

// MessageByID loads a message with no owner check, for the reply engine,
// which only ever holds ids the web layer already checked.
func (s *Service) MessageByID(ctx context.Context, messageID string) (Message, error) {
	m, err := scanMessage(s.db.R.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM messages WHERE id = ?`, messageID))
	if errors.Is(err, sql.ErrNoRows) {
		return Message{}, notFound(messageID)
	}
	if err != nil {
		return Message{}, fmt.Errorf("chat: message %s: %w", messageID, err)
	}
	return m, nil
}

// ChatByID loads a chat with no owner check, for the reply engine.
func (s *Service) ChatByID(ctx context.Context, chatID string) (Chat, error) {
	c, err := scanChat(s.db.R.QueryRowContext(ctx, `SELECT `+chatColumns+` FROM chats WHERE id = ?`, chatID))
	if errors.Is(err, sql.ErrNoRows) {
		return Chat{}, notFound(chatID)
	}
	if err != nil {
		return Chat{}, fmt.Errorf("chat: get %s: %w", chatID, err)
	}
	return c, nil
}

func prefixed(p, columns string) string {
	parts := strings.Split(columns, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

func validateContent(content string) (string, error) {
	// A plain form posts \r\n, htmx posts \n: store one kind of line.
	content = strings.ReplaceAll(content, "\r\n", "\n")
	if strings.TrimSpace(content) == "" {
		return "", fault.Field("content", "Write a message first.")
	}
	if utf8.RuneCountInString(content) > MaxContent {
		return "", fault.Field("content", fmt.Sprintf("A message has at most %d characters.", MaxContent))
	}
	return content, nil
}

func nullable[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
