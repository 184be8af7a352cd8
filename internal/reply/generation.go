package reply

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"lembas/internal/auth"
	"lembas/internal/catalog"
	"lembas/internal/chat"
	"lembas/internal/fault"
	"lembas/internal/llm"
)

// Statuses a live reply shows beside its text.
const (
	PhaseWaiting   = "waiting"   // request sent, nothing back yet
	PhaseThinking  = "thinking"  // reasoning is arriving
	PhaseWriting   = "writing"   // the answer is arriving
	PhaseTools     = "tools"     // the round's tool calls are running
	PhaseAsking    = "asking"    // paused for the person
	PhaseFinishing = "finishing" // storing
)

// Generation is one reply being written.
type Generation struct {
	r         *Registry
	messageID string
	chatID    string
	ctx       context.Context
	stopFn    context.CancelCauseFunc

	mu      sync.Mutex
	version uint64
	changed chan struct{}

	content   strings.Builder
	reasoning strings.Builder
	renderer  Renderer
	html      string
	htmlAt    uint64 // version html was rendered at
	phase     string
	status    string // chat status once finished
	errText   string
	metrics   Live
	question  *Question
	answers   chan Answer
	done      bool
	doneAt    time.Time
	next      string // the queued turn's reply that follows, if any
	title     string // set when the chat was named after this reply
	titled    bool   // naming is over (or was never needed)

	roundRunes   int // written this round, for the live estimate
	started      time.Time
	firstToken   time.Time
	thinkStarted time.Time
	thinkEnded   time.Time
}

// Live are a reply's figures as it streams.
type Live struct {
	PromptTokens     int  // every round's prompt, added up
	CompletionTokens int  // everything written, thinking included
	ContextTokens    int  // the last round's prompt plus what it wrote
	Estimated        bool // some count was estimated
	ContextLength    int  // 0 = unknown
	TTFT             time.Duration
	Elapsed          time.Duration
	TokensPerSecond  float64
	ThinkingFor      time.Duration
}

// Snapshot is everything a follower shows, at one version.
type Snapshot struct {
	Version   uint64
	MessageID string
	ChatID    string
	Content   string
	HTML      string
	Reasoning string
	Phase     string
	Metrics   Live
	Question  *Question
	Done      bool
	Status    string // when Done: done, stopped, error or interrupted
	Error     string
	Next      string // when Done: the reply that follows from the queue
	Title     string // the chat's new title, once made
	Titled    bool   // naming is over
}

func newGeneration(r *Registry, m chat.Message, ctx context.Context, cancel context.CancelCauseFunc) *Generation {
	g := &Generation{r: r, messageID: m.ID, chatID: m.ChatID, ctx: ctx, stopFn: cancel,
		changed: make(chan struct{}), phase: PhaseWaiting, started: r.d.Now(), answers: make(chan Answer, 1)}
	g.renderer = r.d.NewRenderer()
	return g
}

// bump records a change: every follower waiting on Changed wakes. Caller
// holds mu.
func (g *Generation) bump() {
	g.version++
	close(g.changed)
	g.changed = make(chan struct{})
}

// Changed returns a channel closed at the next change.
func (g *Generation) Changed() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.changed
}

// Snapshot returns the current state. The HTML is rendered at most once
// per version however many followers ask.
func (g *Generation) Snapshot() Snapshot {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.htmlAt != g.version || g.version == 0 {
		g.html = g.renderer.HTML()
		g.htmlAt = g.version
	}
	s := Snapshot{Version: g.version, MessageID: g.messageID, ChatID: g.chatID, Content: g.content.String(),
		HTML: g.html, Reasoning: g.reasoning.String(), Phase: g.phase, Metrics: g.liveMetrics(), Done: g.done,
		Status: g.status, Error: g.errText, Next: g.next, Title: g.title, Titled: g.titled}
	if g.question != nil {
		q := *g.question
		s.Question = &q
	}
	return s
}

// Await waits until ok holds for a snapshot, ctx ends, or the reply can
// no longer change without it holding. It takes the change channel before each
// snapshot, so a change between the two is never missed.
func (g *Generation) Await(ctx context.Context, ok func(Snapshot) bool) (Snapshot, error) {
	for {
		changed := g.Changed()
		s := g.Snapshot()
		if ok(s) {
			return s, nil
		}
		// A finished reply still changes once more, when its title is
		// made; after that nothing will.
		if s.Done && s.Titled {
			return s, ErrFinished
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return s, ctx.Err()
		}
	}
}

// liveMetrics adds the round in progress, estimated, to the finished
// rounds' figures. Caller holds mu.
func (g *Generation) liveMetrics() Live {
	m := g.metrics
	if g.done {
		return m
	}
	if g.roundRunes > 0 {
		m.CompletionTokens += (g.roundRunes + 3) / 4
		m.ContextTokens += (g.roundRunes + 3) / 4
		m.Estimated = true
	}
	now := g.r.d.Now()
	m.Elapsed = now.Sub(g.started)
	if !g.firstToken.IsZero() {
		if secs := now.Sub(g.firstToken).Seconds(); secs > 0.2 {
			m.TokensPerSecond = float64(m.CompletionTokens) / secs
		}
	}
	if !g.thinkStarted.IsZero() {
		m.ThinkingFor = g.thinkEnded.Sub(g.thinkStarted)
	}
	return m
}

func (g *Generation) finishedAt() (time.Time, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.doneAt, g.done
}

func (g *Generation) cancel(reason error) { g.stopFn(reason) }

// setPhase changes what the reply says it is doing.
func (g *Generation) setPhase(p string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.phase != p {
		g.phase = p
		g.bump()
	}
}

// job is what one reply works with, loaded once.
type job struct {
	chat     chat.Chat
	user     auth.User
	model    catalog.Model
	endpoint llm.Endpoint
	req      llm.ChatRequest
	history  []chat.Message
}

func (g *Generation) load() (job, error) {
	d := g.r.d
	ctx := g.ctx
	c, err := d.Chats.ChatByID(ctx, g.chatID)
	if err != nil {
		return job{}, err
	}
	u, err := d.Auth.UserByID(ctx, c.UserID)
	if err != nil {
		return job{}, err
	}
	unavailable := fault.New(fault.Conflict, "This chat's model is not available any more. Choose another in the chat settings and try again.")
	ok, err := d.Catalog.CanUse(ctx, u, c.ModelID)
	if err != nil {
		return job{}, err
	}
	if !ok {
		return job{}, unavailable
	}
	ep, m, err := d.Catalog.EndpointFor(ctx, c.ModelID)
	if err != nil {
		return job{}, unavailable
	}
	history, err := d.Chats.Messages(ctx, g.chatID)
	if err != nil {
		return job{}, err
	}
	ladder := chat.Ladder{Chat: c.SystemPrompt, Model: m.SystemPrompt, Instance: d.InstancePrompt()}
	req := chat.BuildRequest(c, chat.Target{UpstreamName: m.UpstreamName, Vision: m.Caps.Vision}, ladder, history, g.messageID)
	return job{chat: c, user: u, model: m, endpoint: ep, req: req, history: history}, nil
}

// run writes the reply. It always ends by storing what it has (unless a
// regeneration took the reply over), recording usage, delivering the next
// queued turn when the reply finished well, and only then marking done:
// a follower that sees done re-renders from the database, so the row must
// be authoritative first.
func (g *Generation) run() {
	stopPersist := g.persistLoop()
	j, err := g.load()
	var runErr error
	if err == nil {
		g.mu.Lock()
		g.metrics.ContextLength = j.model.ContextLength
		g.mu.Unlock()
		runErr = g.rounds(j)
	} else {
		runErr = err
	}
	stopPersist()
	g.finish(j, runErr)
}

// rounds streams until a round ends without tool calls.
func (g *Generation) rounds(j job) error {
	d := g.r.d
	req := j.req
	if d.Toolbox != nil {
		req.Tools = d.Toolbox.Tools(g.ctx, g.toolJob(j))
	}
	for round := 0; ; round++ {
		last := round >= d.MaxRounds
		if last {
			// A budget must never end a reply in silence: withdraw the
			// tools and ask once more for an answer from what was gathered.
			req.Tools = nil
		}
		text, calls, err := g.stream(j, req)
		if err != nil {
			return err
		}
		if len(calls) == 0 || last {
			return nil
		}
		g.setPhase(PhaseTools)
		results := g.runCalls(j, calls)
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: text, ToolCalls: calls})
		for i, c := range calls {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: results[i]})
		}
		g.setPhase(PhaseWaiting)
	}
}

// stream runs one round and returns its answer text (flushed: the think
// splitter's held-back characters included) and its tool calls.
func (g *Generation) stream(j job, req llm.ChatRequest) (string, []llm.ToolCall, error) {
	d := g.r.d
	estimatePrompt := chat.EstimateRequest(req)
	s, err := d.Streamer.Stream(g.ctx, j.endpoint, req)
	if err != nil {
		g.addRound(estimatePrompt, nil, "")
		return "", nil, err
	}
	defer s.Close()
	var split llm.ThinkSplitter
	var asm llm.ToolCallAssembler
	var round strings.Builder
	var usage *llm.Usage
	var written strings.Builder // for the estimate
	for {
		chunk, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			a, r := split.Flush()
			g.append(a, r)
			round.WriteString(a)
			written.WriteString(a + r)
			g.addRound(estimatePrompt, usage, written.String())
			return round.String(), nil, err
		}
		if chunk.Usage != nil {
			usage = chunk.Usage
		}
		answer, thought := split.Feed(chunk.Content)
		thought = chunk.Reasoning + thought
		if answer != "" || thought != "" {
			g.append(answer, thought)
			round.WriteString(answer)
			written.WriteString(answer + thought)
		}
		for _, tc := range chunk.ToolCalls {
			if err := asm.Add(tc); err != nil {
				d.Log.Warn("reply: tool call fragment", "err", err)
			}
		}
	}
	a, r := split.Flush()
	g.append(a, r)
	round.WriteString(a)
	written.WriteString(a + r)
	g.addRound(estimatePrompt, usage, written.String())
	return round.String(), asm.Calls(), nil
}

// append adds streamed text to the reply's state.
func (g *Generation) append(answer, thought string) {
	if answer == "" && thought == "" {
		return
	}
	now := g.r.d.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.firstToken.IsZero() {
		g.firstToken = now
		g.metrics.TTFT = now.Sub(g.started)
	}
	if thought != "" {
		if g.thinkStarted.IsZero() {
			g.thinkStarted = now
		}
		g.thinkEnded = now
		g.reasoning.WriteString(thought)
		g.phase = PhaseThinking
	}
	if answer != "" {
		g.content.WriteString(answer)
		g.renderer.Append(answer)
		g.phase = PhaseWriting
	}
	g.roundRunes += utf8.RuneCountInString(answer) + utf8.RuneCountInString(thought)
	g.bump()
}

// addRound folds one round's figures in: the server's usage when it sent
// one, otherwise an estimate (four characters to a token).
func (g *Generation) addRound(estimatePrompt int, usage *llm.Usage, written string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	prompt, completion := estimatePrompt, chat.EstimateTokens(written)
	if usage != nil && (usage.PromptTokens > 0 || usage.CompletionTokens > 0) {
		prompt, completion = usage.PromptTokens, usage.CompletionTokens
	} else {
		g.metrics.Estimated = true
	}
	g.metrics.PromptTokens += prompt
	g.metrics.CompletionTokens += completion
	g.metrics.ContextTokens = prompt + completion
	g.roundRunes = 0
	g.bump()
}

// runCalls runs a round's tool calls together and returns the results in
// index order, whatever order they finish in. With no Toolbox every call
// is refused in words the model can read.
func (g *Generation) runCalls(j job, calls []llm.ToolCall) []string {
	tb := g.r.d.Toolbox
	if tb == nil {
		out := make([]string, len(calls))
		for i, c := range calls {
			out[i] = "No tool named " + c.Name + " is available in this chat. Answer without tools."
		}
		return out
	}
	out := tb.Run(g.ctx, g.toolJob(j), calls, g.Ask)
	for len(out) < len(calls) {
		out = append(out, "The tool returned nothing.")
	}
	return out[:len(calls)]
}

func (g *Generation) toolJob(j job) ToolJob {
	return ToolJob{ChatID: g.chatID, MessageID: g.messageID, UserID: j.user.ID, ModelCaps: j.model.Caps}
}

// persistLoop writes what the reply has every PersistEvery, so a crash
// or kill -9 loses seconds, not the reply. The returned func stops it.
func (g *Generation) persistLoop() func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(g.r.d.PersistEvery)
		defer t.Stop()
		var saved uint64
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				g.mu.Lock()
				v, content, reasoning := g.version, g.content.String(), g.reasoning.String()
				g.mu.Unlock()
				if v == saved || !g.r.owns(g) {
					continue
				}
				// Its own short context: a stop must not lose the write.
				ctx, cancel := context.WithTimeout(context.WithoutCancel(g.ctx), 5*time.Second)
				if err := g.r.d.Chats.SavePartial(ctx, g.messageID, content, reasoning); err != nil {
					g.r.d.Log.Warn("reply: save partial", "message", g.messageID, "err", err)
				}
				cancel()
				saved = v
			}
		}
	}()
	return func() { close(stop); <-done }
}

// finish stores the reply, records usage, delivers the next queued turn
// and marks the generation done, in that order.
func (g *Generation) finish(j job, runErr error) {
	d := g.r.d
	g.setPhase(PhaseFinishing)
	status, errText := chat.StatusDone, ""
	switch cause := context.Cause(g.ctx); {
	case runErr == nil:
	case errors.Is(cause, errStopped):
		status = chat.StatusStopped
	case errors.Is(cause, errSuperseded):
		status = chat.StatusStopped
	case errors.Is(cause, errShutdown), errors.Is(runErr, context.Canceled):
		status, errText = chat.StatusInterrupted, "The server stopped while this reply was being written."
	default:
		status, errText = chat.StatusError, errorSentence(runErr)
		d.Log.Warn("reply failed", "message", g.messageID, "err", runErr)
	}
	now := d.Now()
	g.mu.Lock()
	m := g.metrics
	m.Elapsed = now.Sub(g.started)
	if !g.firstToken.IsZero() {
		if secs := now.Sub(g.firstToken).Seconds(); secs > 0 {
			m.TokensPerSecond = float64(m.CompletionTokens) / secs
		}
	}
	if !g.thinkStarted.IsZero() {
		m.ThinkingFor = g.thinkEnded.Sub(g.thinkStarted)
	}
	g.metrics = m
	content, reasoning := g.content.String(), g.reasoning.String()
	final := g.renderer.Final()
	g.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.WithoutCancel(g.ctx), 10*time.Second)
	defer cancel()
	owner := g.r.owns(g)
	wrote := false
	if owner {
		f := chat.Final{Content: content, HTML: final, Reasoning: reasoning, ReasoningHTML: d.RenderMarkdown(reasoning),
			ReasoningMS: m.ThinkingFor.Milliseconds(),
			Status:      status, Error: errText, Metrics: storedMetrics(m, g.firstToken.IsZero())}
		var err error
		if wrote, err = d.Chats.Finish(ctx, g.messageID, f); err != nil {
			d.Log.Error("reply: store", "message", g.messageID, "err", err)
		}
	}
	// An endpoint charges for what it generated whether anybody wanted it.
	if j.user.ID != "" && (m.PromptTokens > 0 || m.CompletionTokens > 0) {
		d.Auth.RecordUsage(ctx, j.user.ID, now, m.PromptTokens, m.CompletionTokens, m.Estimated)
	}
	next := ""
	// Deliver the next queued turn only after a reply that finished well:
	// a stopped one was the person's decision, an errored one would feed
	// the next prompt to an endpoint that just failed, and a superseded
	// one is not ours to continue.
	if wrote && status == chat.StatusDone {
		if nm, ok, err := d.Chats.DeliverNext(ctx, g.chatID, j.model.Name()); err != nil {
			d.Log.Error("reply: deliver queued turn", "chat", g.chatID, "err", err)
		} else if ok {
			if _, err := g.r.start(nm, false); err == nil {
				next = nm.ID
			}
		}
	}
	needTitle := wrote && status == chat.StatusDone && j.chat.TitleSource == "" && content != ""
	g.mu.Lock()
	g.status, g.errText, g.next = status, errText, next
	g.done, g.doneAt = true, d.Now()
	g.titled = !needTitle
	g.phase = ""
	g.bump()
	g.mu.Unlock()
	if needTitle {
		g.r.afterwards(func(base context.Context) { g.makeTitle(base, j, content) })
	}
}

// makeTitle names the chat after its first reply, falling back to the
// first prompt, and tells followers still listening.
func (g *Generation) makeTitle(base context.Context, j job, reply string) {
	d := g.r.d
	ctx, cancel := context.WithTimeout(base, d.TitleTimeout)
	defer cancel()
	prompt := ""
	for _, m := range j.history {
		if m.Role == chat.RoleUser && m.Status != chat.StatusQueued {
			prompt = m.Content
			break
		}
	}
	title, source := chat.MakeTitle(ctx, d.Streamer, j.endpoint, j.model.UpstreamName, prompt, reply)
	set, err := d.Chats.SetMadeTitle(context.WithoutCancel(ctx), g.chatID, title, source)
	if err != nil {
		d.Log.Warn("reply: title", "chat", g.chatID, "err", err)
	}
	g.mu.Lock()
	if set {
		g.title = title
	}
	g.titled = true
	g.bump()
	g.mu.Unlock()
}

func storedMetrics(m Live, nothingArrived bool) chat.Metrics {
	out := chat.Metrics{Estimated: m.Estimated, ContextLength: m.ContextLength}
	if m.PromptTokens > 0 || m.CompletionTokens > 0 {
		p, c, ctxTok := m.PromptTokens, m.CompletionTokens, m.ContextTokens
		out.PromptTokens, out.CompletionTokens, out.ContextTokens = &p, &c, &ctxTok
	}
	if !nothingArrived {
		ttft := m.TTFT.Milliseconds()
		out.TTFT = &ttft
	}
	dur := m.Elapsed.Milliseconds()
	out.Duration = &dur
	return out
}

// errorSentence is what the person reads when a reply fails: the
// upstream's own sentence when it is one of ours, never a stack trace.
func errorSentence(err error) string {
	var le *llm.Error
	if errors.As(err, &le) {
		return le.Error()
	}
	if fe, ok := fault.As(err); ok {
		return fe.Message
	}
	return "The reply failed on our side; it has been logged."
}
