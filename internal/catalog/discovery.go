package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"lembas/internal/db"
	"lembas/internal/fault"
	"lembas/internal/llm"
)

// TestResult is what listing a connection's models found, without storing
// any model.
type TestResult struct {
	Duration time.Duration
	Count    int   // models listed
	Err      error // the upstream's failure, if any; its sentence is recorded as LastError
}

// DiscoverResult says what a discovery changed.
type DiscoverResult struct {
	Added    int // models new to the catalog
	Updated  int // known models whose discovered facts changed, or that came back
	Missing  int // known models the server no longer lists (kept, unavailable)
	Duration time.Duration
	Err      error // the upstream's failure, if any; nothing was changed then
}

// ErrNoLister means the Service was built without a way to reach
// upstreams.
var ErrNoLister = errors.New("catalog: no lister configured")

const maxErrorSentence = 500

// list asks the upstream once, bounded by the connection's timeout.
func (s *Service) list(ctx context.Context, c Connection) ([]llm.Model, time.Duration, error) {
	if s.lister == nil {
		return nil, 0, ErrNoLister
	}
	ep, err := s.Endpoint(c)
	if err != nil {
		return nil, 0, err
	}
	lctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	start := time.Now()
	models, err := s.lister.ListModels(lctx, ep)
	d := time.Since(start)
	if err == nil && lctx.Err() != nil {
		// A lister that ignored its deadline and answered late still
		// exceeded the connection's timeout.
		err = lctx.Err()
	}
	return models, d, err
}

// errorSentence turns an upstream failure into the sentence recorded on
// the connection.
func errorSentence(err error, timeout time.Duration) string {
	var msg string
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		secs := int(timeout / time.Second)
		unit := "seconds"
		if secs == 1 {
			unit = "second"
		}
		msg = fmt.Sprintf("The server did not answer within %d %s.", secs, unit)
	case errors.Is(err, ErrKeyUnreadable):
		msg = ErrKeyUnreadable.Message
	default:
		if fe, ok := fault.As(err); ok {
			msg = fe.Message
		} else {
			msg = err.Error()
		}
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if utf8.RuneCountInString(msg) > maxErrorSentence {
		msg = string([]rune(msg)[:maxErrorSentence-1]) + "…"
	}
	return msg
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func (s *Service) recordStatus(ctx context.Context, ex execer, c Connection, d time.Duration, upstreamErr error) error {
	status, sentence := "ok", ""
	if upstreamErr != nil {
		status, sentence = "error", errorSentence(upstreamErr, c.Timeout)
	}
	_, err := ex.ExecContext(ctx,
		`UPDATE connections SET last_checked_at = ?, last_status = ?, last_error = ?, last_duration_ms = ? WHERE id = ?`,
		s.nowMillis(), status, sentence, d.Milliseconds(), c.ID)
	if err != nil {
		return fmt.Errorf("catalog: connection %s: record status: %w", c.ID, err)
	}
	return nil
}

// Test lists a connection's models once and records the outcome on the
// connection; it stores no model. The returned error is ours (no such
// connection, the database); the upstream's failure is in TestResult.Err.
func (s *Service) Test(ctx context.Context, connID string) (TestResult, error) {
	c, err := s.GetConnection(ctx, connID)
	if err != nil {
		return TestResult{}, err
	}
	models, d, upErr := s.list(ctx, c)
	if errors.Is(upErr, ErrNoLister) {
		return TestResult{}, upErr
	}
	if ctx.Err() != nil {
		return TestResult{}, fmt.Errorf("catalog: test %s: %w", connID, ctx.Err())
	}
	if err := s.recordStatus(ctx, s.db.W, c, d, upErr); err != nil {
		return TestResult{}, err
	}
	return TestResult{Duration: d, Count: len(models), Err: upErr}, nil
}

// known is what discovery compares against for a model already stored.
type known struct {
	id               string
	available        bool
	caps             Caps
	capsSource       string
	contextLength    int
	contextLengthSrc string
	ownedBy, descr   string
	promptP, complP  string
}

// Discover lists a connection's models once and merges them into the
// catalog in one transaction. New models join the end of the order,
// enabled, with the capabilities and context length the server stated
// (nothing guessed). Known models keep every administrator choice; their
// discovered facts are refreshed, and a capability or context length the
// administrator set is left alone. Models the server no longer lists are
// marked unavailable, never deleted. On an upstream failure nothing but
// the connection's status changes.
func (s *Service) Discover(ctx context.Context, connID string) (DiscoverResult, error) {
	c, err := s.GetConnection(ctx, connID)
	if err != nil {
		return DiscoverResult{}, err
	}
	listed, d, upErr := s.list(ctx, c)
	if errors.Is(upErr, ErrNoLister) {
		return DiscoverResult{}, upErr
	}
	if ctx.Err() != nil {
		return DiscoverResult{}, fmt.Errorf("catalog: discover %s: %w", connID, ctx.Err())
	}
	res := DiscoverResult{Duration: d, Err: upErr}
	if upErr != nil {
		return res, s.recordStatus(ctx, s.db.W, c, d, upErr)
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		// The connection may have been deleted while the server answered.
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM connections WHERE id = ?`, c.ID).Scan(&one); err != nil {
			return noRows(err, "discover "+c.ID, ErrNoConnection)
		}
		if err := s.merge(ctx, tx, c.ID, listed, &res); err != nil {
			return err
		}
		return s.recordStatus(ctx, tx, c, d, nil)
	})
	if err != nil {
		return DiscoverResult{}, err
	}
	return res, nil
}

func (s *Service) merge(ctx context.Context, tx *sql.Tx, connID string, listed []llm.Model, res *DiscoverResult) error {
	rows, err := tx.QueryContext(ctx,
		`SELECT id, upstream_name, available, vision, tools, reasoning, embedding, caps_source,
		        context_length, context_length_source, upstream_owned_by, upstream_description,
		        upstream_prompt_price, upstream_completion_price
		 FROM models WHERE connection_id = ?`, connID)
	if err != nil {
		return fmt.Errorf("catalog: discover %s: load: %w", connID, err)
	}
	have := map[string]*known{}
	for rows.Next() {
		var k known
		var name string
		if err := rows.Scan(&k.id, &name, &k.available, &k.caps.Vision, &k.caps.Tools, &k.caps.Reasoning,
			&k.caps.Embedding, &k.capsSource, &k.contextLength, &k.contextLengthSrc, &k.ownedBy, &k.descr,
			&k.promptP, &k.complP); err != nil {
			rows.Close()
			return fmt.Errorf("catalog: discover %s: load: %w", connID, err)
		}
		have[name] = &k
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return fmt.Errorf("catalog: discover %s: load: %w", connID, err)
	}
	rows.Close()

	var next int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(position) + 1, 0) FROM models`).Scan(&next); err != nil {
		return fmt.Errorf("catalog: discover %s: %w", connID, err)
	}
	now := s.nowMillis()
	seen := map[string]bool{}
	for _, lm := range listed {
		name := lm.ID
		if strings.TrimSpace(name) == "" || seen[name] {
			continue
		}
		seen[name] = true
		k, ok := have[name]
		if !ok {
			caps, capsSrc := statedCaps(Caps{}, lm)
			ctxSrc := SourceNone
			if lm.ContextLength > 0 {
				ctxSrc = SourceUpstream
			}
			_, err := tx.ExecContext(ctx,
				`INSERT INTO models (id, connection_id, upstream_name, position, enabled, available,
				   vision, tools, reasoning, embedding, caps_source, context_length, context_length_source,
				   upstream_owned_by, upstream_description, upstream_prompt_price, upstream_completion_price,
				   created_at, updated_at)
				 VALUES (?, ?, ?, ?, 1, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				db.NewID(), connID, name, next, caps.Vision, caps.Tools, caps.Reasoning, caps.Embedding,
				string(capsSrc), max(lm.ContextLength, 0), string(ctxSrc), lm.OwnedBy, lm.Description,
				lm.PromptPrice, lm.CompletionPrice, now, now)
			if err != nil {
				return fmt.Errorf("catalog: discover %s: add %q: %w", connID, name, err)
			}
			next++
			res.Added++
			continue
		}
		u := *k
		u.available = true
		if k.capsSource != string(SourceAdmin) {
			caps, src := statedCaps(k.caps, lm)
			u.caps = caps
			if src == SourceUpstream {
				u.capsSource = string(src)
			}
		}
		if k.contextLengthSrc != string(SourceAdmin) && lm.ContextLength > 0 {
			u.contextLength, u.contextLengthSrc = lm.ContextLength, string(SourceUpstream)
		}
		u.ownedBy, u.descr, u.promptP, u.complP = lm.OwnedBy, lm.Description, lm.PromptPrice, lm.CompletionPrice
		if u == *k {
			continue
		}
		_, err := tx.ExecContext(ctx,
			`UPDATE models SET available = 1, vision = ?, tools = ?, reasoning = ?, embedding = ?, caps_source = ?,
			   context_length = ?, context_length_source = ?, upstream_owned_by = ?, upstream_description = ?,
			   upstream_prompt_price = ?, upstream_completion_price = ?, updated_at = ?
			 WHERE id = ?`,
			u.caps.Vision, u.caps.Tools, u.caps.Reasoning, u.caps.Embedding, u.capsSource,
			u.contextLength, u.contextLengthSrc, u.ownedBy, u.descr, u.promptP, u.complP, now, k.id)
		if err != nil {
			return fmt.Errorf("catalog: discover %s: refresh %q: %w", connID, name, err)
		}
		res.Updated++
	}
	for name, k := range have {
		if seen[name] {
			continue
		}
		res.Missing++
		if !k.available {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE models SET available = 0, updated_at = ? WHERE id = ?`, now, k.id); err != nil {
			return fmt.Errorf("catalog: discover %s: mark %q unavailable: %w", connID, name, err)
		}
	}
	return nil
}

// statedCaps applies the capabilities the server stated to cur; a
// capability it did not mention keeps its value. The source is upstream
// when it stated any.
func statedCaps(cur Caps, lm llm.Model) (Caps, Source) {
	src := SourceNone
	for _, x := range []struct {
		stated *bool
		field  *bool
	}{{lm.Vision, &cur.Vision}, {lm.Tools, &cur.Tools}, {lm.Reasoning, &cur.Reasoning}, {lm.Embedding, &cur.Embedding}} {
		if x.stated != nil {
			*x.field = *x.stated
			src = SourceUpstream
		}
	}
	return cur, src
}

// RefreshAll discovers every enabled connection, a few at once, and
// returns when all are done. It is the start-up refresh: run it in the
// background, never before serving, since pages read only the database.
// Upstream failures are recorded on each connection and logged; the
// returned error joins only our own failures, and is ctx's error when ctx
// ends first (shutdown), which a caller can ignore.
func (s *Service) RefreshAll(ctx context.Context) error {
	conns, err := s.queryConnections(ctx,
		`SELECT `+connectionColumns+` FROM connections c WHERE c.enabled = 1 ORDER BY c.name, c.id`)
	if err != nil {
		return err
	}
	sem := make(chan struct{}, s.parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, c := range conns {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res, err := s.Discover(ctx, c.ID)
			switch {
			case err != nil:
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			case res.Err != nil:
				s.log.Info("model discovery failed", "connection", c.Name, "error", errorSentence(res.Err, c.Timeout), "duration", res.Duration)
			default:
				s.log.Info("models discovered", "connection", c.Name, "added", res.Added, "updated", res.Updated,
					"missing", res.Missing, "duration", res.Duration)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
