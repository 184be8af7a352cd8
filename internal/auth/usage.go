package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"lembas/internal/fault"
)

// Usage is what a person was charged in one period.
type Usage struct {
	Period           string // "YYYY-MM", UTC
	PromptTokens     int64
	CompletionTokens int64
	Replies          int64
	// EstimatedTokens is the part of the tokens above that was estimated
	// because the endpoint reported no usage. When it is not zero the
	// totals are approximate and are shown with a "~".
	EstimatedTokens int64
}

// Tokens is prompt and completion tokens together, what monthly_tokens
// counts.
func (u Usage) Tokens() int64 { return u.PromptTokens + u.CompletionTokens }

// Estimated reports whether any of the tokens were estimated.
func (u Usage) Estimated() bool { return u.EstimatedTokens > 0 }

// Period returns the usage period t falls in: its calendar month in UTC,
// whatever anybody's own zone. A quota that reset at a different instant
// for each member of a group would be one nobody can reason about.
func Period(t time.Time) string { return t.UTC().Format("2006-01") }

// recordTimeout bounds a usage write that no longer follows the caller's
// cancellation.
const recordTimeout = 10 * time.Second

// RecordUsage charges one reply's tokens to userID for the month of at.
// Call it for every reply that reached the endpoint, finished, stopped or
// failed: the endpoint charges for tokens whether anybody wanted them, and
// a quota that only counted happy paths is one a Stop button walks past.
//
// It never fails the caller. Bookkeeping that broke a reply would be worse
// than none, so an error is logged to the Service's logger and dropped, and
// the write ignores the caller's cancellation (a stopped reply is still
// charged). It is one upsert on the single writer, so concurrent records
// never lose an increment.
func (s *Service) RecordUsage(ctx context.Context, userID string, at time.Time, prompt, completion int, estimated bool) {
	prompt, completion = max(prompt, 0), max(completion, 0)
	var est int
	if estimated {
		est = prompt + completion
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	period := Period(at)
	_, err := s.db.W.ExecContext(ctx,
		`INSERT INTO usage (user_id, period, prompt_tokens, completion_tokens, replies, estimated_tokens)
		 VALUES (?, ?, ?, ?, 1, ?)
		 ON CONFLICT (user_id, period) DO UPDATE SET
		     prompt_tokens = prompt_tokens + excluded.prompt_tokens,
		     completion_tokens = completion_tokens + excluded.completion_tokens,
		     replies = replies + 1,
		     estimated_tokens = estimated_tokens + excluded.estimated_tokens`,
		userID, period, prompt, completion, est)
	if err != nil {
		s.log.Error("record usage", "user", userID, "period", period,
			"prompt_tokens", prompt, "completion_tokens", completion, "estimated", estimated, "err", err)
	}
}

// UsageFor returns userID's usage in period ("YYYY-MM"). A period with no
// row is a true zero: nothing was charged.
func (s *Service) UsageFor(ctx context.Context, userID, period string) (Usage, error) {
	if t, err := time.Parse("2006-01", period); err != nil || Period(t) != period {
		return Usage{}, fault.New(fault.Invalid, "Write the month as YYYY-MM.")
	}
	u := Usage{Period: period}
	err := s.db.R.QueryRowContext(ctx,
		`SELECT prompt_tokens, completion_tokens, replies, estimated_tokens
		 FROM usage WHERE user_id = ? AND period = ?`, userID, period).
		Scan(&u.PromptTokens, &u.CompletionTokens, &u.Replies, &u.EstimatedTokens)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Usage{}, fmt.Errorf("auth: usage of %s in %s: %w", userID, period, err)
	}
	return u, nil
}

// UsageThisMonth returns userID's usage in the current UTC month.
func (s *Service) UsageThisMonth(ctx context.Context, userID string) (Usage, error) {
	return s.UsageFor(ctx, userID, Period(s.now()))
}
