// Package catalog owns connections to OpenAI-compatible servers and the
// models found on them: discovery, the administrator's flags, order,
// defaults and avatars, and who may use which model. It holds all SQL that
// touches the connections, models, model_groups and catalog_seed tables.
//
// Pages read only the database: nothing here calls an upstream unless asked
// to (Test, Discover, RefreshAll), and each such call is bounded by the
// connection's timeout. API keys and header values are sealed at rest and
// leave the package in plaintext only inside an llm.Endpoint; views carry a
// masked key and header names.
//
// It does not decide what a chat sends: a model's sampling defaults, effort
// and system prompt are seeds that the chat package copies onto a new chat.
package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"lembas/internal/db"
	"lembas/internal/llm"
	"lembas/internal/secret"
)

// Lister lists the models an endpoint offers. llm.Client satisfies it;
// tests replace it.
type Lister interface {
	ListModels(ctx context.Context, ep llm.Endpoint) ([]llm.Model, error)
}

// Service is the catalog API.
type Service struct {
	db       *db.DB
	box      *secret.Box
	lister   Lister
	filesDir string
	now      func() time.Time
	log      *slog.Logger
	parallel int
}

// Options configure a Service.
type Options struct {
	// Lister reaches the upstreams. Without one, Test and Discover fail
	// with an internal error; everything that reads the database works.
	Lister Lister
	// FilesDir is config.FilesDir(); avatars live in its avatars folder.
	FilesDir string
	Now      func() time.Time
	// Logger receives one line per connection refreshed by RefreshAll
	// (whose outcomes have no caller to return to). Nil discards.
	Logger *slog.Logger
	// RefreshParallel bounds how many connections RefreshAll discovers at
	// once; 0 means 4.
	RefreshParallel int
}

// New builds a Service.
func New(d *db.DB, box *secret.Box, opt Options) *Service {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.RefreshParallel <= 0 {
		opt.RefreshParallel = 4
	}
	return &Service{
		db: d, box: box, lister: opt.Lister, filesDir: opt.FilesDir,
		now: opt.Now, log: opt.Logger, parallel: opt.RefreshParallel,
	}
}

func (s *Service) nowMillis() int64 { return db.Millis(s.now()) }

// Source says who stated a fact about a model.
type Source string

const (
	SourceNone     Source = ""         // nobody has said
	SourceUpstream Source = "upstream" // the server stated it at discovery
	SourceAdmin    Source = "admin"    // an administrator set it; discovery leaves it alone
)

// Efforts returns the valid reasoning efforts, weakest first, ending with
// EffortOff. The chat controls and the model form read the same list.
func Efforts() []string { return []string{"low", "medium", "high", EffortOff} }

// EffortOff is an explicit "no reasoning": a value, unlike the empty
// string, which means no default at all (stored as NULL).
const EffortOff = "off"

// ValidEffort reports whether e is one of Efforts.
func ValidEffort(e string) bool {
	for _, v := range Efforts() {
		if v == e {
			return true
		}
	}
	return false
}

func isUniqueViolation(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

func isForeignKeyViolation(err error) bool {
	return err != nil && strings.Contains(err.Error(), "FOREIGN KEY constraint failed")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// placeholders returns "?, ?, ?" for n values.
func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// noRows turns sql.ErrNoRows into the not-found sentinel, wrapped with what
// was looked for.
func noRows(err error, what string, notFound error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("catalog: %s: %w", what, notFound)
	}
	return fmt.Errorf("catalog: %s: %w", what, err)
}
