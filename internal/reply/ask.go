package reply

import (
	"context"
	"errors"
	"time"

	"lembas/internal/catalog"
	"lembas/internal/llm"
)

// Toolbox offers tools to a reply and runs the calls a round makes. The
// tool issues plug in here; phase one has none.
type Toolbox interface {
	// Tools lists what this reply may call.
	Tools(ctx context.Context, j ToolJob) []llm.Tool
	// Run runs one round's calls together and returns one result per call,
	// in the calls' order. It may pause the reply with ask — once per
	// round, covering every call that needs the person — and must never
	// panic or return fewer results than calls.
	Run(ctx context.Context, j ToolJob, calls []llm.ToolCall, ask func(Question) (Answer, error)) []string
}

// ToolJob says whose reply a call belongs to.
type ToolJob struct {
	ChatID    string
	MessageID string
	UserID    string
	ModelCaps catalog.Caps
}

// Question pauses a reply to ask the person something: a command waiting
// to be allowed, a question the model asked, or "this reply is waiting for
// you". One question covers a whole round.
type Question struct {
	Key   string // identifies this question; an answer must carry it
	Kind  string // "approve", "ask" or "wait"
	Title string
	Items []Item
	// Deadline ends the wait with ErrNoAnswer; zero means AskTimeout.
	Deadline time.Time
}

// Item is one thing the question is about.
type Item struct {
	Key   string
	Index int // the tool call it belongs to
	Text  string
}

// Answer is the person's reply to a Question.
type Answer struct {
	Key    string
	Values map[string]string // by Item.Key
}

// AskTimeout is how long a reply waits for a person by default. A paused
// reply is deliberately not done — a reload reattaches to it — so the
// deadline is what keeps it from lingering.
const AskTimeout = 30 * time.Minute

var (
	// ErrNoQuestion means nothing is waiting for an answer (or the key is
	// stale).
	ErrNoQuestion = errors.New("reply: no question is waiting")
	// ErrFinished means a reply ended before what was awaited happened.
	ErrFinished = errors.New("reply: finished")
	// ErrNoAnswer means the wait ended without an answer: the deadline
	// passed, or the reply was stopped.
	ErrNoAnswer = errors.New("reply: no answer")
)

// Ask pauses the reply until the person answers q, the deadline passes or
// the reply is stopped. Stopping must wake it: a paused reply reads no
// chunks, so the stop flag would never be seen otherwise.
func (g *Generation) Ask(q Question) (Answer, error) {
	if q.Deadline.IsZero() {
		q.Deadline = g.r.d.Now().Add(AskTimeout)
	}
	g.mu.Lock()
	// Drop a stale answer from an earlier question.
	select {
	case <-g.answers:
	default:
	}
	prev := g.phase
	g.question, g.phase = &q, PhaseAsking
	g.bump()
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.question, g.phase = nil, prev
		g.bump()
		g.mu.Unlock()
	}()
	timer := time.NewTimer(time.Until(q.Deadline))
	defer timer.Stop()
	select {
	case a := <-g.answers:
		return a, nil
	case <-g.ctx.Done():
		return Answer{}, ErrNoAnswer
	case <-timer.C:
		return Answer{}, ErrNoAnswer
	}
}

// answer delivers a, when it answers the question waiting.
func (g *Generation) answer(a Answer) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.question == nil || g.question.Key != a.Key {
		return ErrNoQuestion
	}
	select {
	case g.answers <- a:
		return nil
	default:
		return ErrNoQuestion // already answered
	}
}
