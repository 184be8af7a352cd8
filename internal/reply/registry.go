// Package reply is the reply engine: it writes a chat's replies in the
// background and lets any number of followers watch.
//
// A Generation is owned by one goroutine started from the application's
// root context, never a request's: closing a browser, navigating away or
// losing the connection never stops a reply. The Registry maps a reply's
// message id to its Generation. Ensure attaches to one or starts it,
// Restart replaces it (regenerate), Stop cancels it and keeps what
// arrived. A finished Generation lingers for KeepFinished so a follower
// arriving at the last moment still sees the end.
//
// The work is rounds from the start: stream a round, reassemble tool-call
// fragments by index, run the round's calls together, append the results
// in index order, ask again. A Toolbox decides what is offered and runs
// calls, and can pause the reply to ask the person (Ask); with no Toolbox
// nothing is offered and a stray call is answered with a refusal.
package reply

import (
	"context"
	"errors"
	"html"
	"log/slog"
	"sync"
	"time"

	"lembas/internal/auth"
	"lembas/internal/catalog"
	"lembas/internal/chat"
	"lembas/internal/llm"
)

// Streamer opens a streaming completion; llm.Client satisfies it.
type Streamer interface {
	Stream(ctx context.Context, ep llm.Endpoint, req llm.ChatRequest) (*llm.Stream, error)
	Complete(ctx context.Context, ep llm.Endpoint, req llm.ChatRequest) (llm.Completion, error)
}

// Renderer turns a reply's Markdown into HTML as it streams: Append is
// called with each piece, HTML for the live view, Final once at the end
// for what is stored. render.Stream satisfies it.
type Renderer interface {
	Append(delta string)
	HTML() string
	Final() string
}

// Deps is what the engine needs. Tests replace Streamer and NewRenderer.
type Deps struct {
	Chats    *chat.Service
	Catalog  *catalog.Service
	Auth     *auth.Service
	Streamer Streamer
	// NewRenderer makes a renderer for one reply; RenderMarkdown renders a
	// finished text (reasoning) to sanitised HTML, stored with the reply.
	NewRenderer    func() Renderer
	RenderMarkdown func(string) string
	// InstancePrompt returns the instance's system prompt (the last rung).
	InstancePrompt func() string
	Toolbox        Toolbox // nil: no tools are offered
	Log            *slog.Logger
	Now            func() time.Time
	// PersistEvery is how often a reply in flight writes what it has.
	PersistEvery time.Duration
	// KeepFinished is how long a finished generation stays attachable.
	KeepFinished time.Duration
	// MaxRounds is the runaway backstop for the tool loop.
	MaxRounds int
	// TitleTimeout bounds naming a chat after its first reply.
	TitleTimeout time.Duration
}

// Registry holds the generations in flight and recently finished.
type Registry struct {
	d Deps

	mu      sync.Mutex
	base    context.Context
	gens    map[string]*Generation
	wg      sync.WaitGroup
	closing bool
}

// New builds a Registry. Generations started before Run use a background
// context; Run replaces it with the application's.
func New(d Deps) *Registry {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.PersistEvery <= 0 {
		d.PersistEvery = 3 * time.Second
	}
	if d.KeepFinished <= 0 {
		d.KeepFinished = time.Minute
	}
	if d.MaxRounds <= 0 {
		d.MaxRounds = 50
	}
	if d.TitleTimeout <= 0 {
		d.TitleTimeout = 45 * time.Second
	}
	if d.RenderMarkdown == nil {
		// Without a renderer, reasoning is stored escaped: whatever is
		// stored here is later shown as HTML.
		d.RenderMarkdown = html.EscapeString
	}
	if d.InstancePrompt == nil {
		d.InstancePrompt = func() string { return "" }
	}
	return &Registry{d: d, base: context.Background(), gens: map[string]*Generation{}}
}

// Run ties generations to ctx and prunes finished ones until ctx ends;
// then it cancels every generation in flight (each stores what it had,
// marked interrupted) and waits for them.
func (r *Registry) Run(ctx context.Context) error {
	r.mu.Lock()
	r.base = ctx
	r.mu.Unlock()
	t := time.NewTicker(15 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			r.mu.Lock()
			r.closing = true
			for _, g := range r.gens {
				g.cancel(errShutdown)
			}
			r.mu.Unlock()
			r.wg.Wait()
			return nil
		case <-t.C:
			r.prune()
		}
	}
}

// Wait blocks until every generation has ended, for tests.
func (r *Registry) Wait() { r.wg.Wait() }

func (r *Registry) prune() {
	now := r.d.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, g := range r.gens {
		if at, done := g.finishedAt(); done && now.Sub(at) > r.d.KeepFinished {
			delete(r.gens, id)
		}
	}
}

// ErrClosing means the engine is shutting down and starts nothing new.
var ErrClosing = errors.New("reply: shutting down")

// Get returns the generation for a reply, if one is registered.
func (r *Registry) Get(messageID string) *Generation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gens[messageID]
}

// Ensure attaches to the reply's generation, starting one when the reply
// is still marked as being written and nobody is writing it. It returns
// nil for a reply that is finished. It is idempotent: a page load finding
// an unfinished reply attaches rather than starting a second writer.
func (r *Registry) Ensure(ctx context.Context, messageID string) (*Generation, error) {
	if g := r.Get(messageID); g != nil {
		return g, nil
	}
	m, err := r.d.Chats.MessageByID(ctx, messageID)
	if err != nil {
		return nil, err
	}
	if m.Role != chat.RoleAssistant || m.Status != chat.StatusStreaming {
		return nil, nil
	}
	return r.start(m, false)
}

// Restart replaces the reply's generation with a new one: regenerating
// reuses the message row, so attaching to the finished generation would
// make no request at all. The caller has reset the row.
func (r *Registry) Restart(ctx context.Context, messageID string) (*Generation, error) {
	m, err := r.d.Chats.MessageByID(ctx, messageID)
	if err != nil {
		return nil, err
	}
	return r.start(m, true)
}

func (r *Registry) start(m chat.Message, replace bool) (*Generation, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return nil, ErrClosing
	}
	if old := r.gens[m.ID]; old != nil {
		if !replace {
			return old, nil
		}
		// The predecessor loses ownership now; whatever it does on its
		// way out is not written.
		old.cancel(errSuperseded)
	}
	// Cut loose from the base context's cancellation: Run decides when a
	// generation ends at shutdown, with a cause that says so.
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.base))
	g := newGeneration(r, m, ctx, cancel)
	r.gens[m.ID] = g
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		g.run()
	}()
	return g, nil
}

// owns reports whether g is still the generation registered for its reply.
func (r *Registry) owns(g *Generation) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gens[g.messageID] == g
}

// Stop stops a reply; what arrived is kept and it is marked stopped, not
// errored. It reports whether a generation was running.
func (r *Registry) Stop(messageID string) bool {
	g := r.Get(messageID)
	if g == nil {
		return false
	}
	if _, done := g.finishedAt(); done {
		return false
	}
	g.cancel(errStopped)
	return true
}

// Answer delivers a person's answer to the question a reply is waiting on.
func (r *Registry) Answer(messageID string, a Answer) error {
	g := r.Get(messageID)
	if g == nil {
		return ErrNoQuestion
	}
	return g.answer(a)
}

// afterwards runs fn as part of the engine's work, so shutdown waits for
// it (titles).
func (r *Registry) afterwards(fn func(ctx context.Context)) {
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		return
	}
	base := r.base
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		fn(base)
	}()
}

// Cancellation causes.
var (
	errStopped    = errors.New("stopped by the person")
	errSuperseded = errors.New("superseded by a regeneration")
	errShutdown   = errors.New("the server is shutting down")
)
