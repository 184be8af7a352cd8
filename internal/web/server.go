// Package web is LLeMbas's HTTP layer: every route (routes.go), the
// middleware, template rendering and the handlers. Handlers are thin: they
// parse the request, call the package that owns the data, and render. They
// return errors; one wrapper turns an error into a status and a page.
package web

import (
	"context"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"lembas/internal/auth"
	"lembas/internal/catalog"
	"lembas/internal/chat"
	"lembas/internal/db"
	"lembas/internal/fault"
	"lembas/internal/reply"
	"lembas/internal/settings"
)

// Deps is what the web layer needs from the rest of the app.
type Deps struct {
	Log      *slog.Logger
	DB       *db.DB
	Auth     *auth.Service
	Settings *settings.Store
	Catalog  *catalog.Service
	Chats    *chat.Service
	Replies  *reply.Registry
	Version  string
	// Dev reads templates from TemplatesDir on every render.
	Dev          bool
	TemplatesDir string
}

// Server holds the handlers' dependencies.
type Server struct {
	log      *slog.Logger
	db       *db.DB
	auth     *auth.Service
	settings *settings.Store
	catalog  *catalog.Service
	chats    *chat.Service
	replies  *reply.Registry
	version  string
	views    *views
	assets   *assets
	started  time.Time

	quitOnce sync.Once
	quit     chan struct{} // closed when the server shuts down
}

// Close tells long-lived responses (reply streams) to end, so a shutdown
// does not wait on them; the browser reconnects to the next process.
func (s *Server) Close() { s.quitOnce.Do(func() { close(s.quit) }) }

// New builds a Server, parsing every template and hashing every static
// file; a template that does not parse stops startup here.
func New(d Deps) (*Server, error) {
	as, err := newAssets(staticFS())
	if err != nil {
		return nil, err
	}
	var tfs fs.FS = templateFS
	if d.Dev && d.TemplatesDir != "" {
		tfs = dirFS(d.TemplatesDir)
	}
	s := &Server{log: d.Log, db: d.DB, auth: d.Auth, settings: d.Settings, catalog: d.Catalog, chats: d.Chats, replies: d.Replies, version: d.Version,
		assets: as, started: time.Now(), quit: make(chan struct{})}
	s.views, err = newViews(tfs, s.funcs(), d.Dev)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Handler is the whole site: routes wrapped in the middleware chain.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	s.routes(mux)
	var h http.Handler = s.themedMisses(mux)
	h = s.loadSession(h)
	h = crossOrigin(h, s)
	h = securityHeaders(h)
	h = s.logRequests(h)
	h = s.recoverPanics(h)
	return h
}

// Ping is used by healthz.
func (s *Server) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return s.db.Ping(ctx)
}

// themedMisses answers a path no route matches with the themed 404 page
// and a wrong method with 405, instead of the mux's plain text.
func (s *Server) themedMisses(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		rec := &statusOnly{header: http.Header{}}
		mux.ServeHTTP(rec, r)
		if rec.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", rec.header.Get("Allow"))
			s.fail(w, r, fault.New(fault.MethodNotAllowed, "This address does not accept that kind of request."))
			return
		}
		s.notFound(w, r)
	})
}

// statusOnly records what the mux would answer without sending it.
type statusOnly struct {
	header http.Header
	status int
}

func (s *statusOnly) Header() http.Header         { return s.header }
func (s *statusOnly) Write(b []byte) (int, error) { return len(b), nil }
func (s *statusOnly) WriteHeader(code int)        { s.status = code }
