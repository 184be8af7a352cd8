package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"lembas/internal/db"
	"lembas/internal/fault"
)

// SessionLifetime is how long a session lives without being used. Each use
// (at most once a minute) pushes the expiry out again.
const SessionLifetime = 30 * 24 * time.Hour

// touchEvery limits how often a session's last-seen time is written, so an
// ordinary page view costs no write.
const touchEvery = time.Minute

// Session is one signed-in browser.
type Session struct {
	ID         string // public id, safe to put in a form; never the token
	UserID     string
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
	UserAgent  string
	IP         string
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CreateSession signs userID in and returns the token for the cookie.
func (s *Service) CreateSession(ctx context.Context, userID, userAgent, ip string) (string, Session, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", Session{}, fmt.Errorf("auth: session token: %w", err)
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	now := s.now()
	if len(userAgent) > 300 {
		userAgent = userAgent[:300]
	}
	sess := Session{ID: db.NewID(), UserID: userID, CreatedAt: now, LastSeenAt: now,
		ExpiresAt: now.Add(SessionLifetime), UserAgent: userAgent, IP: ip}
	_, err := s.db.W.ExecContext(ctx,
		`INSERT INTO sessions (token_hash, id, user_id, created_at, last_seen_at, expires_at, user_agent, ip)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		hashToken(token), sess.ID, userID, now.UnixMilli(), now.UnixMilli(), sess.ExpiresAt.UnixMilli(), userAgent, ip)
	if err != nil {
		return "", Session{}, fmt.Errorf("auth: create session: %w", err)
	}
	return token, sess, nil
}

// ErrNoSession means the token names no live session.
var ErrNoSession = fault.New(fault.Unauthorized, "Please sign in.")

// SessionUser resolves a cookie token to its session and account. An
// expired session, or one whose account is disabled, is no session.
func (s *Service) SessionUser(ctx context.Context, token string) (User, Session, error) {
	if token == "" {
		return User{}, Session{}, ErrNoSession
	}
	var row userRow
	var sess Session
	var created, seen, expires int64
	err := s.db.R.QueryRowContext(ctx,
		`SELECT s.id, s.created_at, s.last_seen_at, s.expires_at, s.user_agent, s.ip, `+userColumns("u")+`
		 FROM sessions s JOIN users u ON u.id = s.user_id
		 WHERE s.token_hash = ?`, hashToken(token)).
		Scan(append([]any{&sess.ID, &created, &seen, &expires, &sess.UserAgent, &sess.IP}, row.dest()...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, Session{}, ErrNoSession
	}
	if err != nil {
		return User{}, Session{}, fmt.Errorf("auth: session: %w", err)
	}
	u := row.user()
	now := s.now()
	if now.UnixMilli() >= expires || u.Disabled {
		return User{}, Session{}, ErrNoSession
	}
	sess.UserID = u.ID
	sess.CreatedAt, sess.LastSeenAt, sess.ExpiresAt = db.Time(created), db.Time(seen), db.Time(expires)
	if now.Sub(sess.LastSeenAt) >= touchEvery {
		sess.LastSeenAt, sess.ExpiresAt = now, now.Add(SessionLifetime)
		_, err := s.db.W.ExecContext(ctx, `UPDATE sessions SET last_seen_at = ?, expires_at = ? WHERE id = ?`,
			now.UnixMilli(), sess.ExpiresAt.UnixMilli(), sess.ID)
		if err != nil {
			return User{}, Session{}, fmt.Errorf("auth: touch session: %w", err)
		}
	}
	return u, sess, nil
}

// DeleteSession signs one browser out by its token.
func (s *Service) DeleteSession(ctx context.Context, token string) error {
	_, err := s.db.W.ExecContext(ctx, `DELETE FROM sessions WHERE token_hash = ?`, hashToken(token))
	if err != nil {
		return fmt.Errorf("auth: delete session: %w", err)
	}
	return nil
}

// Sessions lists an account's live sessions, most recently used first.
func (s *Service) Sessions(ctx context.Context, userID string) ([]Session, error) {
	rows, err := s.db.R.QueryContext(ctx,
		`SELECT id, created_at, last_seen_at, expires_at, user_agent, ip FROM sessions
		 WHERE user_id = ? AND expires_at > ? ORDER BY last_seen_at DESC`, userID, s.now().UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("auth: sessions: %w", err)
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		ss := Session{UserID: userID}
		var created, seen, expires int64
		if err := rows.Scan(&ss.ID, &created, &seen, &expires, &ss.UserAgent, &ss.IP); err != nil {
			return nil, fmt.Errorf("auth: sessions: %w", err)
		}
		ss.CreatedAt, ss.LastSeenAt, ss.ExpiresAt = db.Time(created), db.Time(seen), db.Time(expires)
		out = append(out, ss)
	}
	return out, rows.Err()
}

// RevokeOtherSessions signs userID out everywhere except keepID and
// returns how many sessions ended.
func (s *Service) RevokeOtherSessions(ctx context.Context, userID, keepID string) (int, error) {
	res, err := s.db.W.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND id <> ?`, userID, keepID)
	if err != nil {
		return 0, fmt.Errorf("auth: revoke sessions: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// RevokeSession ends one of userID's own sessions by its public id. Another
// account's session id is not found.
func (s *Service) RevokeSession(ctx context.Context, userID, sessionID string) error {
	res, err := s.db.W.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND id = ?`, userID, sessionID)
	if err != nil {
		return fmt.Errorf("auth: revoke session: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("auth: session %s: %w", sessionID, fault.ErrNotFound)
	}
	return nil
}

// SweepSessions deletes expired sessions.
func (s *Service) SweepSessions(ctx context.Context) (int, error) {
	res, err := s.db.W.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, s.now().UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("auth: sweep sessions: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// RunSweeper deletes expired sessions every hour until ctx ends. A failed
// sweep is logged and tried again next hour; it is no reason to stop.
func (s *Service) RunSweeper(ctx context.Context, log *slog.Logger) error {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if _, err := s.SweepSessions(ctx); err != nil && ctx.Err() == nil {
			log.Error("sweep sessions", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
