// Package llmtest is a scripted fake of an OpenAI-compatible server for
// tests, in the manner of net/http/httptest. It serves GET /v1/models in
// the shape of each real server we talk to, and POST /v1/chat/completions
// from scripts that reproduce the real servers' stream quirks: reasoning
// in either field or inline, tags split across chunks, tool-call fragments,
// usage present or absent, error objects mid-stream, keepalive comments,
// slow, stalled and cut streams, error statuses, and a server that never
// answers. It records every request so a test can assert exactly what was
// sent.
//
// It speaks only the wire format and imports nothing of ours, so the
// package under test can use it from its own tests.
package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Server is a running fake. Configure it with SetModels, Script, Enqueue,
// Default, RequireKey and SetHang; all of them are safe to call while
// requests are being served.
type Server struct {
	// URL is the base URL including /v1: what an Endpoint's BaseURL
	// would be.
	URL string

	ts        *httptest.Server
	done      chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	requests []Request
	scripts  map[string][]Reply
	queue    []Reply
	fallback *Reply
	models   modelsConfig
	apiKey   string
	hang     bool
	gone     int
	changed  chan struct{} // closed and replaced whenever gone changes
}

// Request is one request the server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	// Body is the JSON body decoded into maps, slices, float64s and
	// strings; nil when there was none or it was not JSON.
	Body map[string]any
	Raw  []byte
}

// New starts a server; Close stops it.
func New() *Server {
	s := &Server{
		done:    make(chan struct{}),
		scripts: make(map[string][]Reply),
		changed: make(chan struct{}),
		models:  modelsConfig{shape: ShapeOpenAI},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", s.serveModels)
	mux.HandleFunc("POST /v1/chat/completions", s.serveChat)
	mux.HandleFunc("/", s.serveUnknown)
	s.ts = httptest.NewServer(s.record(mux))
	s.URL = s.ts.URL + "/v1"
	return s
}

// NewServer starts a server that stops when tb ends.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	s := New()
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server. Requests still hanging or stalled are released
// first, so Close never waits on a client that is not reading.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.ts.CloseClientConnections()
		s.ts.Close()
	})
}

// Requests returns a copy of every request received, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// LastRequest returns the most recent request; the zero Request if none
// came.
func (s *Server) LastRequest() Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return Request{}
	}
	return s.requests[len(s.requests)-1]
}

// RequireKey makes every request without "Authorization: Bearer key"
// fail with 401 and an OpenAI-style error body. Empty turns it off.
func (s *Server) RequireKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apiKey = key
}

// SetHang makes the server accept every request and never answer, until
// the client gives up or the server closes: what a wedged server, or a
// firewall that swallows packets after the handshake, looks like.
func (s *Server) SetHang(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hang = on
}

// Script sets the replies for requests naming model: each request takes
// the next, and the last one is kept for every request after it. A tool
// round followed by an answer is Script(m, toolReply, answerReply).
func (s *Server) Script(model string, replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts[model] = append([]Reply(nil), replies...)
}

// Enqueue adds replies that the next requests take, whatever model they
// name, before any script.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Default sets the reply for models without a script. Without one, such a
// request gets a 404 naming the model, as OpenAI answers it.
func (s *Server) Default(r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = &r
}

// ClientsGone counts the requests whose client went away before the
// answer was complete: a cancelled stream, an abandoned stall, a timeout.
func (s *Server) ClientsGone() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone
}

// WaitClientsGone waits until at least n clients have gone away, or ctx
// ends.
func (s *Server) WaitClientsGone(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		gone, changed := s.gone, s.changed
		s.mu.Unlock()
		if gone >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("llmtest: %d of %d clients gone: %w", gone, n, ctx.Err())
		}
	}
}

func (s *Server) clientGone() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gone++
	close(s.changed)
	s.changed = make(chan struct{})
}

// record keeps every request and applies the server-wide behaviours
// (key, hang) before the routes.
func (s *Server) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		r.Body = io.NopCloser(bytes.NewReader(raw))
		req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw}
		if len(bytes.TrimSpace(raw)) > 0 {
			var body map[string]any
			if json.Unmarshal(raw, &body) == nil {
				req.Body = body
			}
		}
		s.mu.Lock()
		s.requests = append(s.requests, req)
		key, hang := s.apiKey, s.hang
		s.mu.Unlock()

		if hang {
			s.block(r.Context())
			return
		}
		if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
			writeError(w, http.StatusUnauthorized, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// block waits until the client goes away or the server closes.
func (s *Server) block(ctx context.Context) {
	select {
	case <-ctx.Done():
		s.clientGone()
	case <-s.done:
	}
}

// sleep waits d; false when the client went away (counted) or the server
// closed first.
func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		s.clientGone()
		return false
	case <-s.done:
		return false
	}
}

func (s *Server) serveUnknown(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, fmt.Sprintf("Unknown request URL: %s %s.", r.Method, r.URL.Path), "invalid_request_error", "unknown_url")
}

// writeError writes an OpenAI-style error object.
func writeError(w http.ResponseWriter, status int, message, typ, code string) {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": typ, "param": nil, "code": code,
	}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// reply picks the reply for a request naming model.
func (s *Server) reply(model string) (Reply, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) > 0 {
		r := s.queue[0]
		s.queue = s.queue[1:]
		return r, true
	}
	if list := s.scripts[model]; len(list) > 0 {
		r := list[0]
		if len(list) > 1 {
			s.scripts[model] = list[1:]
		}
		return r, true
	}
	if s.fallback != nil {
		return *s.fallback, true
	}
	return Reply{}, false
}

// words cuts s into pieces of about n bytes, on rune boundaries.
func words(s string, n int) []string {
	if n <= 0 {
		n = 4
	}
	var out []string
	for len(s) > 0 {
		cut := n
		if cut >= len(s) {
			out = append(out, s)
			break
		}
		for cut < len(s) && !isRuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
