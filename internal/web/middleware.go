package web

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"lembas/internal/auth"
	"lembas/internal/fault"
)

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyUser
	keySession
)

// SessionCookie is the name of the cookie that carries a session token.
// Part of the automation contract.
const SessionCookie = "lembas_session"

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(keyRequestID).(string)
	return id
}

// currentUser returns the signed-in account, or nil. Handlers read it here,
// at the edge, and pass it on explicitly.
func currentUser(r *http.Request) *auth.User {
	u, _ := r.Context().Value(keyUser).(*auth.User)
	return u
}

func currentSession(r *http.Request) *auth.Session {
	s, _ := r.Context().Value(keySession).(*auth.Session)
	return s
}

// statusWriter remembers the status for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush and deadlines.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := w.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("hijack not supported")
}

// logRequests gives each request an id and logs one line when it ends.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var raw [8]byte
		_, _ = rand.Read(raw[:])
		id := hex.EncodeToString(raw[:])
		r = r.WithContext(context.WithValue(r.Context(), keyRequestID, id))
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		s.log.LogAttrs(r.Context(), levelFor(sw.status, r.URL.Path), "request",
			slog.String("id", id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", sw.status), slog.Duration("took", time.Since(start)))
	})
}

// levelFor keeps the log readable: static files and health checks only at
// debug, server errors as errors.
func levelFor(status int, path string) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case path == "/healthz" || strings.HasPrefix(path, "/static/"):
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// recoverPanics turns a panic in a handler into a logged 500 page instead
// of a dropped connection.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil || v == http.ErrAbortHandler {
				if v != nil {
					panic(v)
				}
				return
			}
			s.log.ErrorContext(r.Context(), "panic", "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			s.fail(w, r, fmt.Errorf("panic: %v", v))
		}()
		next.ServeHTTP(w, r)
	})
}

// contentSecurityPolicy forbids inline script and style and every
// third-party origin, so a sanitiser slip still executes nothing.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; " +
	"frame-ancestors 'none'; form-action 'self'"

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

// crossOrigin refuses unsafe cross-origin browser requests (CSRF) before
// any handler runs.
func crossOrigin(next http.Handler, s *Server) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, fault.New(fault.Forbidden, "This request came from another site and was refused."))
	}))
	return cop.Handler(next)
}

// loadSession resolves the session cookie, if any, into the request's
// context. It never refuses: the guards below decide.
func (s *Server) loadSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(SessionCookie)
		if err != nil || c.Value == "" {
			next.ServeHTTP(w, r)
			return
		}
		u, sess, err := s.auth.SessionUser(r.Context(), c.Value)
		switch {
		case err == nil:
			ctx := context.WithValue(r.Context(), keyUser, &u)
			ctx = context.WithValue(ctx, keySession, &sess)
			r = r.WithContext(ctx)
		case errors.Is(err, auth.ErrNoSession):
			clearSessionCookie(w, r)
		default:
			s.fail(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireUser lets only signed-in accounts through. A page load is sent to
// sign in; anything else gets 401.
func (s *Server) requireUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if currentUser(r) == nil {
			s.fail(w, r, auth.ErrNoSession)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireAdmin lets only administrators through.
func (s *Server) requireAdmin(next http.Handler) http.Handler {
	return s.requireUser(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !currentUser(r).IsAdmin {
			s.fail(w, r, fault.New(fault.Forbidden, "Only an administrator can open this page."))
			return
		}
		next.ServeHTTP(w, r)
	}))
}

func setSessionCookie(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: token, Path: "/",
		MaxAge:   int(auth.SessionLifetime / time.Second),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: isTLS(r),
	})
}

func clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: isTLS(r),
	})
}

// isTLS reports whether the browser reached us over TLS, directly or
// through a proxy that says so. The header only ever adds Secure to a
// cookie, so trusting it cannot weaken anything.
func isTLS(r *http.Request) bool {
	return r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"
}

// clientAddr is the address failures are counted against. Forwarded
// headers are not trusted: anyone could set them to escape the count.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
