// Package app assembles LLeMbas from its Config: the secret key, the
// database, the services and the web layer. It runs the HTTP server and
// every background part under one errgroup and shuts them down in order:
// stop accepting, let requests and background parts finish, close the
// database last.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"lembas/internal/auth"
	"lembas/internal/catalog"
	"lembas/internal/chat"
	"lembas/internal/config"
	"lembas/internal/db"
	"lembas/internal/llm"
	"lembas/internal/render"
	"lembas/internal/reply"
	"lembas/internal/secret"
	"lembas/internal/settings"
	"lembas/internal/web"
)

// App is one running instance.
type App struct {
	cfg      config.Config
	log      *slog.Logger
	DB       *db.DB
	Box      *secret.Box
	Auth     *auth.Service
	Settings *settings.Store
	LLM      *llm.Client
	Catalog  *catalog.Service
	Chats    *chat.Service
	Replies  *reply.Registry
	Web      *web.Server
}

// Options tune New for tests and tools.
type Options struct {
	Version    string
	AuthParams auth.Params // zero means production argon2id costs
}

// New builds every part. It opens the database and applies migrations; a
// failure leaves nothing open.
func New(ctx context.Context, cfg config.Config, log *slog.Logger, opt Options) (_ *App, err error) {
	a := &App{cfg: cfg, log: log}
	key, created, err := secret.LoadOrCreate(cfg.SecretKey, cfg.SecretKeyPath())
	if err != nil {
		return nil, err
	}
	if created {
		log.Warn("generated a new secret key; back it up with the database, or set LEMBAS_SECRET_KEY",
			"path", cfg.SecretKeyPath())
	}
	if a.Box, err = secret.New(key); err != nil {
		return nil, err
	}
	if a.DB, err = db.Open(ctx, cfg.DBPath()); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			a.DB.Close()
		}
	}()
	if a.Settings, err = settings.Open(ctx, a.DB); err != nil {
		return nil, err
	}
	if err := a.seedFromEnvironment(ctx); err != nil {
		return nil, err
	}
	a.Auth = auth.New(a.DB, auth.Options{Params: opt.AuthParams, Settings: a.Settings, Log: log})
	a.LLM = llm.New(llm.Options{})
	a.Catalog = catalog.New(a.DB, a.Box, catalog.Options{Lister: a.LLM, FilesDir: cfg.FilesDir(), Logger: log})
	if cfg.OpenAIBaseURL != "" {
		created, err := a.Catalog.SeedFromEnvironment(ctx, cfg.OpenAIBaseURL, cfg.OpenAIAPIKey)
		if err != nil {
			return nil, err
		}
		if created {
			log.Info("added a connection from LEMBAS_OPENAI_BASE_URL", "url", cfg.OpenAIBaseURL)
		}
	}
	a.Chats = chat.New(a.DB, nil)
	// Nothing is writing a reply that was in flight when the last process
	// stopped: it keeps what it had, marked interrupted, with Regenerate.
	if n, err := a.Chats.MarkInterrupted(ctx); err != nil {
		return nil, err
	} else if n > 0 {
		log.Info("replies interrupted by the last stop", "count", n)
	}
	a.Replies = reply.New(reply.Deps{
		Chats: a.Chats, Catalog: a.Catalog, Auth: a.Auth, Streamer: a.LLM, Log: log,
		NewRenderer:    func() reply.Renderer { return new(render.Stream) },
		RenderMarkdown: render.Markdown,
		InstancePrompt: a.Settings.SystemPrompt,
	})
	a.Web, err = web.New(web.Deps{
		Log: log, DB: a.DB, Auth: a.Auth, Settings: a.Settings, Catalog: a.Catalog, Chats: a.Chats, Replies: a.Replies,
		Version: opt.Version,
		Dev:     cfg.Dev, TemplatesDir: "internal/web/templates",
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// seedFromEnvironment stores environment values as settings on the first
// start only; after that the database wins.
func (a *App) seedFromEnvironment(ctx context.Context) error {
	if a.cfg.AllowSignup != nil {
		if _, err := a.Settings.Seed(ctx, settings.KeyAllowSignup, *a.cfg.AllowSignup); err != nil {
			return err
		}
	}
	return nil
}

// Listen opens the configured address.
func (a *App) Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", a.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s (LEMBAS_ADDR): %w", a.cfg.Addr, err)
	}
	return ln, nil
}

// ShutdownGrace is how long requests in flight get to finish.
const ShutdownGrace = 10 * time.Second

// Serve runs the HTTP server on ln and the background parts until ctx ends,
// then shuts down in order and closes the database.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           a.Web.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
		// Request contexts are not derived from ctx: a reply stream must
		// end through its own path, not because shutdown began.
	}
	srv.RegisterOnShutdown(a.Web.Close)
	background, stopBackground := context.WithCancel(context.Background())
	defer stopBackground()

	g, gctx := errgroup.WithContext(background)
	g.Go(func() error {
		a.log.Info("serving", "addr", "http://"+ln.Addr().String(), "data", a.cfg.DataDir)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("http server: %w", err)
		}
		return nil
	})
	g.Go(func() error { return a.Auth.RunSweeper(gctx, a.log) })
	g.Go(func() error { return a.Replies.Run(gctx) })
	// Refresh every connection's models once, in the background: a dead
	// or hanging endpoint must never hold up startup or a page, which read
	// only what the last discovery stored.
	g.Go(func() error {
		if err := a.Catalog.RefreshAll(gctx); err != nil && gctx.Err() == nil {
			a.log.Warn("refreshing models at startup", "err", err)
		}
		return nil
	})

	// Wait for the caller to stop us, or for a part to fail.
	select {
	case <-ctx.Done():
	case <-gctx.Done():
	}
	a.log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	shutErr := srv.Shutdown(shutdownCtx)
	stopBackground()
	runErr := g.Wait()
	closeErr := a.DB.Close()
	return errors.Join(runErr, shutErr, closeErr)
}

// Close releases what New opened, for callers that never Serve.
func (a *App) Close() error { return a.DB.Close() }
