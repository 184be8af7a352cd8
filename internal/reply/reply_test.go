package reply

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"lembas/internal/auth"
	"lembas/internal/catalog"
	"lembas/internal/chat"
	"lembas/internal/db"
	"lembas/internal/llm"
	"lembas/internal/llm/llmtest"
	"lembas/internal/secret"
)

// plain is a renderer that escapes nothing: these tests are about the
// engine, not Markdown.
type plain struct{ b strings.Builder }

func (p *plain) Append(s string) { p.b.WriteString(s) }
func (p *plain) HTML() string    { return "<p>" + p.b.String() + "</p>" }
func (p *plain) Final() string   { return "<p>" + p.b.String() + "</p>" }

type world struct {
	t     testing.TB
	up    *llmtest.Server
	chats *chat.Service
	cat   *catalog.Service
	auth  *auth.Service
	reg   *Registry
	user  auth.User
	model string // our model id
	name  string // its upstream name
}

// newWorld wires the engine to a real SQLite, catalog and auth and a fake
// upstream, for tests and benchmarks alike.
func newWorld(t testing.TB, opts ...func(*Deps)) *world {
	t.Helper()
	ctx := context.Background()
	d, err := db.Open(ctx, filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	key, _ := secret.ParseKey(secret.NewKey())
	box, _ := secret.New(key)
	client := llm.New(llm.Options{})
	a := auth.New(d, auth.Options{Params: auth.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}})
	cat := catalog.New(d, box, catalog.Options{Lister: client, FilesDir: t.TempDir()})
	up := llmtest.NewServer(t)
	up.SetModels(llmtest.ShapeOpenAI, llmtest.ModelSpec{ID: "fake-model"})
	conn, err := cat.CreateConnection(ctx, catalog.ConnectionForm{Name: "fake", BaseURL: up.URL, Timeout: "5"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.Discover(ctx, conn.ID); err != nil {
		t.Fatal(err)
	}
	models, _, _ := cat.ListModels(ctx, catalog.Filter{})
	u, _ := a.Register(ctx, "frodo", "password1", true)
	deps := Deps{Chats: chat.New(d, nil), Catalog: cat, Auth: a, Streamer: client,
		NewRenderer: func() Renderer { return &plain{} }, PersistEvery: 30 * time.Millisecond}
	for _, o := range opts {
		o(&deps)
	}
	w := &world{t: t, up: up, chats: deps.Chats, cat: cat, auth: a, user: u, model: models[0].ID, name: "fake-model"}
	w.reg = New(deps)
	ctxRun, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.reg.Run(ctxRun); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

// start begins a chat and its reply, as the web layer does.
func (w *world) start(content string) chat.Started {
	w.t.Helper()
	st, err := w.chats.Start(context.Background(), w.user.ID, content, chat.Seed{ModelID: w.model, ModelName: w.name})
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.reg.Ensure(context.Background(), st.Assistant.ID); err != nil {
		w.t.Fatal(err)
	}
	return st
}

// waitDone follows a reply to the end and returns its last snapshot.
func (w *world) waitDone(id string) Snapshot {
	w.t.Helper()
	g := w.reg.Get(id)
	if g == nil {
		w.t.Fatalf("no generation for %s", id)
	}
	deadline := time.After(15 * time.Second)
	for {
		ch := g.Changed()
		s := g.Snapshot()
		if s.Done {
			return s
		}
		select {
		case <-ch:
		case <-deadline:
			w.t.Fatalf("reply %s never finished: %+v", id, s)
		}
	}
}

func (w *world) stored(id string) chat.Message {
	w.t.Helper()
	m, err := w.chats.MessageByID(context.Background(), id)
	if err != nil {
		w.t.Fatal(err)
	}
	return m
}

func TestEveryStreamShapeReachesTheStoredMessage(t *testing.T) {
	cases := []struct {
		name           string
		reply          llmtest.Reply
		content, think string
		status         string
		estimated      bool
	}{
		{"plain, no usage", llmtest.Reply{Content: "The road goes ever on."}, "The road goes ever on.", "", chat.StatusDone, true},
		{"usage block", llmtest.Reply{Content: "Hello there.", Usage: true, PromptTokens: 11, CompletionTokens: 3}, "Hello there.", "", chat.StatusDone, false},
		{"reasoning_content", llmtest.Reply{Reasoning: "Let me think.", Content: "Answer."}, "Answer.", "Let me think.", chat.StatusDone, true},
		{"reasoning field", llmtest.Reply{Reasoning: "Hmm.", ReasoningField: "reasoning", Content: "Yes."}, "Yes.", "Hmm.", chat.StatusDone, true},
		{"both fields", llmtest.Reply{Reasoning: "Once.", ReasoningField: "both", Content: "Ok."}, "Ok.", "Once.", chat.StatusDone, true},
		{"inline think split", llmtest.Reply{Reasoning: "inner voice", ThinkInline: true, Chunk: 3, Content: "Spoken."}, "Spoken.", "inner voice", chat.StatusDone, true},
		{"framing quirks", llmtest.Reply{Content: "Quirky but fine.", NoDone: true, CRLF: true, NoSpace: true, EventLines: true, SplitData: true, Keepalive: 2}, "Quirky but fine.", "", chat.StatusDone, true},
		{"error mid-stream", llmtest.Reply{Content: "Half of it and then", ErrorMessage: "model crashed", ErrorAfter: 3}, "", "", chat.StatusError, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.up.Script(w.name, c.reply)
			st := w.start("hi")
			snap := w.waitDone(st.Assistant.ID)
			m := w.stored(st.Assistant.ID)
			if m.Status != c.status || snap.Status != c.status {
				t.Fatalf("status %s / %s, want %s (error %q)", m.Status, snap.Status, c.status, m.Error)
			}
			if c.status == chat.StatusError {
				if !strings.Contains(m.Error, "model crashed") || m.Content == "" {
					t.Fatalf("error reply: content %q error %q (what arrived must be kept, the error in words)", m.Content, m.Error)
				}
				return
			}
			if m.Content != c.content || m.Reasoning != c.think {
				t.Fatalf("stored content %q reasoning %q; want %q %q", m.Content, m.Reasoning, c.content, c.think)
			}
			if c.think != "" && m.ReasoningHTML == "" {
				t.Fatal("the reasoning was not rendered for storage")
			}
			if m.HTML != "<p>"+c.content+"</p>" {
				t.Fatalf("html %q", m.HTML)
			}
			if m.Metrics.Estimated != c.estimated || m.Metrics.CompletionTokens == nil || *m.Metrics.CompletionTokens == 0 {
				t.Fatalf("metrics %+v", m.Metrics)
			}
			if !c.estimated && *m.Metrics.PromptTokens != 11 {
				t.Fatalf("reported prompt tokens not used: %d", *m.Metrics.PromptTokens)
			}
			u, _ := w.auth.UsageThisMonth(context.Background(), w.user.ID)
			if u.Replies != 1 || u.Tokens() == 0 {
				t.Fatalf("usage not recorded: %+v", u)
			}
		})
	}
}

func TestReasoningIsNeverSentBack(t *testing.T) {
	w := newWorld(t)
	w.up.Script(w.name, llmtest.Reply{Reasoning: "PRIVATE", Content: "One."}, llmtest.Reply{Content: "Two."})
	st := w.start("first")
	w.waitDone(st.Assistant.ID)
	sent, err := w.chats.Send(context.Background(), w.user.ID, st.Chat.ID, "second", w.name)
	if err != nil || sent.Queued {
		t.Fatalf("send: %+v %v", sent, err)
	}
	w.reg.Ensure(context.Background(), sent.Assistant.ID)
	w.waitDone(sent.Assistant.ID)
	if strings.Contains(fmt.Sprint(w.lastStream()), "PRIVATE") {
		t.Fatal("reasoning was replayed as context")
	}
}

func TestLateFollowerGetsTheWholeState(t *testing.T) {
	w := newWorld(t)
	w.up.Script(w.name, llmtest.Reply{Content: strings.Repeat("word ", 40), TokensPerSecond: 400})
	st := w.start("hi")
	g := w.reg.Get(st.Assistant.ID)
	// Join when something has arrived.
	await(w.t, g, func(s Snapshot) bool { return !(s.Content == "") })
	s := w.waitDone(st.Assistant.ID)
	if s.Content != strings.Repeat("word ", 40) || !strings.Contains(s.HTML, "word word") {
		t.Fatalf("late follower saw %q", s.Content)
	}
	// A follower arriving after the end still attaches and sees it all.
	again, _ := w.reg.Ensure(context.Background(), st.Assistant.ID)
	if again != g || !again.Snapshot().Done {
		t.Fatal("a finished generation was not kept for late followers")
	}
}

func TestStopKeepsWhatArrived(t *testing.T) {
	w := newWorld(t)
	w.up.Script(w.name, llmtest.Reply{Content: strings.Repeat("slow ", 200), TokensPerSecond: 50})
	st := w.start("hi")
	g := w.reg.Get(st.Assistant.ID)
	await(w.t, g, func(s Snapshot) bool { return !(len(s.Content) < 10) })
	if !w.reg.Stop(st.Assistant.ID) {
		t.Fatal("stop found nothing running")
	}
	s := w.waitDone(st.Assistant.ID)
	m := w.stored(st.Assistant.ID)
	if s.Status != chat.StatusStopped || m.Status != chat.StatusStopped || m.Content == "" || m.Error != "" {
		t.Fatalf("stopped reply: %+v", m)
	}
	if w.reg.Stop(st.Assistant.ID) {
		t.Fatal("stopping a finished reply reported success")
	}
}

func TestPartialContentIsPersistedWhileStreaming(t *testing.T) {
	w := newWorld(t)
	w.up.Script(w.name, llmtest.Reply{Content: strings.Repeat("persist ", 100), TokensPerSecond: 100})
	st := w.start("hi")
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		m := w.stored(st.Assistant.ID)
		if m.Status == chat.StatusStreaming && strings.Contains(m.Content, "persist") {
			w.reg.Stop(st.Assistant.ID)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("nothing was written to the database while the reply streamed")
}

func TestShutdownMarksRepliesInterrupted(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	w.up.Script(w.name, llmtest.Reply{Content: strings.Repeat("long ", 500), TokensPerSecond: 50})
	st, _ := w.chats.Start(ctx, w.user.ID, "hi", chat.Seed{ModelID: w.model, ModelName: w.name})
	reg := New(w.reg.d)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { reg.Run(runCtx); close(done) }()
	time.Sleep(10 * time.Millisecond) // let Run install its context
	g, err := reg.Ensure(ctx, st.Assistant.ID)
	if err != nil {
		t.Fatal(err)
	}
	await(w.t, g, func(s Snapshot) bool { return !(s.Content == "") })
	cancel()
	<-done
	m := w.stored(st.Assistant.ID)
	if m.Status != chat.StatusInterrupted || m.Content == "" {
		t.Fatalf("after shutdown: %s %q", m.Status, m.Content)
	}
	if _, err := reg.Ensure(ctx, st.Assistant.ID); err == nil {
		// Finished replies return nil, nil; a new one after shutdown must
		// not start.
		st2, _ := w.chats.Start(ctx, w.user.ID, "x", chat.Seed{ModelID: w.model})
		if _, err := reg.Ensure(ctx, st2.Assistant.ID); !errors.Is(err, ErrClosing) {
			t.Fatalf("started a reply after shutdown: %v", err)
		}
	}
}

func TestQueuedTurnIsDeliveredAfterTheReply(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	w.up.Script(w.name, llmtest.Reply{Content: "first answer", TokensPerSecond: 40}, llmtest.Reply{Content: "second answer"})
	st := w.start("one")
	sent, err := w.chats.Send(ctx, w.user.ID, st.Chat.ID, "two", w.name)
	if err != nil || !sent.Queued {
		t.Fatalf("not queued: %+v %v", sent, err)
	}
	s := w.waitDone(st.Assistant.ID)
	if s.Next == "" {
		t.Fatal("the queued turn was not delivered")
	}
	w.waitDone(s.Next)
	if got := w.stored(s.Next); got.Content != "second answer" {
		t.Fatalf("second reply %q", got.Content)
	}
	// The second reply's request carries the first exchange and the
	// delivered turn, nothing else (titles are requests too: skip them).
	msgs, _ := w.lastStream()["messages"].([]any)
	if n := len(msgs); n != 3 || msgs[2].(map[string]any)["content"] != "two" {
		t.Fatalf("the second request: %v", msgs)
	}
}

func TestStoppedReplyDoesNotDeliverTheQueue(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	w.up.Script(w.name, llmtest.Reply{Content: strings.Repeat("slow ", 100), TokensPerSecond: 40})
	st := w.start("one")
	w.chats.Send(ctx, w.user.ID, st.Chat.ID, "two", w.name)
	g := w.reg.Get(st.Assistant.ID)
	await(w.t, g, func(s Snapshot) bool { return !(s.Content == "") })
	w.reg.Stop(st.Assistant.ID)
	if s := w.waitDone(st.Assistant.ID); s.Next != "" {
		t.Fatal("stop delivered the queue")
	}
	msgs, _ := w.chats.Messages(ctx, st.Chat.ID)
	if msgs[len(msgs)-1].Status != chat.StatusQueued {
		t.Fatal("the queued turn was not left queued")
	}
}

func TestRegenerateReplacesAndThePredecessorWritesNothing(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	w.up.Script(w.name, llmtest.Reply{Content: strings.Repeat("old ", 200), TokensPerSecond: 60}, llmtest.Reply{Content: "new reply"})
	st := w.start("q")
	old := w.reg.Get(st.Assistant.ID)
	await(w.t, old, func(s Snapshot) bool { return !(s.Content == "") })
	// The restart races the old writer on purpose.
	if _, err := w.chats.ResetReply(ctx, w.user.ID, st.Chat.ID, st.Assistant.ID, w.name); err != nil {
		t.Fatal(err)
	}
	newGen, err := w.reg.Restart(ctx, st.Assistant.ID)
	if err != nil || newGen == old {
		t.Fatalf("restart: %v", err)
	}
	w.waitDone(st.Assistant.ID)
	await(w.t, old, func(s Snapshot) bool { return s.Done })
	if m := w.stored(st.Assistant.ID); m.Content != "new reply" {
		t.Fatalf("stored %q: the superseded generation wrote over the new one", m.Content)
	}
}

func TestAToolCallWithNoToolboxIsRefusedAndTheLoopEnds(t *testing.T) {
	w := newWorld(t)
	w.up.Script(w.name,
		llmtest.Reply{Content: "Let me look.", ToolCalls: []llmtest.ToolCall{{Name: "web_search", Arguments: `{"q":"lembas"}`}, {Name: "web_search", Arguments: `{"q":"waybread"}`}}},
		llmtest.Reply{Content: "Without tools, then."})
	st := w.start("search")
	w.waitDone(st.Assistant.ID)
	m := w.stored(st.Assistant.ID)
	if m.Content != "Let me look.Without tools, then." {
		t.Fatalf("content %q", m.Content)
	}
	msgs := w.lastStream()["messages"].([]any)
	var roles []string
	for _, x := range msgs {
		roles = append(roles, x.(map[string]any)["role"].(string))
	}
	if strings.Join(roles, ",") != "user,assistant,tool,tool" {
		t.Fatalf("second round's turns: %v", roles)
	}
	asst := msgs[1].(map[string]any)
	if calls := asst["tool_calls"].([]any); len(calls) != 2 {
		t.Fatalf("the assistant turn lost its calls: %v", asst)
	}
}

// askingToolbox pauses every round to ask the person, then answers each
// call with what they said.
type askingToolbox struct {
	mu    sync.Mutex
	asked int
}

func (a *askingToolbox) Tools(context.Context, ToolJob) []llm.Tool {
	return []llm.Tool{{Name: "run", Description: "Runs a command.", Parameters: []byte(`{"type":"object"}`)}}
}

func (a *askingToolbox) Run(ctx context.Context, j ToolJob, calls []llm.ToolCall, ask func(Question) (Answer, error)) []string {
	a.mu.Lock()
	a.asked++
	a.mu.Unlock()
	q := Question{Key: fmt.Sprintf("q%d", a.asked), Kind: "approve", Title: "Allow?"}
	for i, c := range calls {
		q.Items = append(q.Items, Item{Key: c.ID, Index: i, Text: c.Arguments})
	}
	ans, err := ask(q)
	out := make([]string, len(calls))
	for i, c := range calls {
		if err != nil {
			out[i] = "refused: nobody answered"
			continue
		}
		out[i] = "person said " + ans.Values[c.ID]
	}
	return out
}

func TestAskPausesAndResumes(t *testing.T) {
	tb := &askingToolbox{}
	w := newWorld(t, func(d *Deps) { d.Toolbox = tb })
	w.up.Script(w.name,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "run", Arguments: `{"cmd":"ls"}`}}},
		llmtest.Reply{Content: "Done."})
	st := w.start("list files")
	g := w.reg.Get(st.Assistant.ID)
	q := await(t, g, func(s Snapshot) bool { return s.Question != nil }).Question
	if g.Snapshot().Phase != PhaseAsking || g.Snapshot().Done {
		t.Fatal("a paused reply must show it is asking and must not be done")
	}
	if err := w.reg.Answer(st.Assistant.ID, Answer{Key: "wrong"}); !errors.Is(err, ErrNoQuestion) {
		t.Fatalf("a stale key was accepted: %v", err)
	}
	if err := w.reg.Answer(st.Assistant.ID, Answer{Key: q.Key, Values: map[string]string{q.Items[0].Key: "yes"}}); err != nil {
		t.Fatal(err)
	}
	w.waitDone(st.Assistant.ID)
	if !strings.Contains(fmt.Sprint(w.lastStream()), "person said yes") {
		t.Fatal("the answer did not reach the tool result")
	}
	if tools := w.up.Requests()[1].Body["tools"]; tools == nil {
		t.Fatal("the toolbox's tools were not offered")
	}
}

func TestStopWakesAPausedReply(t *testing.T) {
	tb := &askingToolbox{}
	w := newWorld(t, func(d *Deps) { d.Toolbox = tb })
	w.up.Script(w.name, llmtest.Reply{Content: "Checking.", ToolCalls: []llmtest.ToolCall{{Name: "run", Arguments: `{}`}}})
	st := w.start("go")
	g := w.reg.Get(st.Assistant.ID)
	await(w.t, g, func(s Snapshot) bool { return !(s.Question == nil) })
	w.reg.Stop(st.Assistant.ID)
	s := w.waitDone(st.Assistant.ID)
	if s.Status != chat.StatusStopped {
		t.Fatalf("status %s", s.Status)
	}
	if m := w.stored(st.Assistant.ID); m.Content != "Checking." {
		t.Fatalf("content %q", m.Content)
	}
}

func TestPromptLadderEffortAndParametersReachTheUpstream(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name        string
		chatPrompt  string
		modelPrompt string
		instance    string
		want        string
	}{
		{"chat wins", "chat prompt", "model prompt", "instance prompt", "chat prompt"},
		{"model when the chat has none", "", "model prompt", "instance prompt", "model prompt"},
		{"instance when nothing else", "", "", "instance prompt", "instance prompt"},
		{"none at all", "", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, func(d *Deps) { d.InstancePrompt = func() string { return c.instance } })
			w.up.Default(llmtest.Reply{Content: "ok"})
			if c.modelPrompt != "" {
				f := catalog.FormOf(mustModel(t, w))
				f.SystemPrompt, f.Effort = c.modelPrompt, "high"
				if _, err := w.cat.UpdateModel(ctx, w.model, f); err != nil {
					t.Fatal(err)
				}
			}
			st, _ := w.chats.Start(ctx, w.user.ID, "hi", chat.Seed{ModelID: w.model, Effort: "off"})
			if c.chatPrompt != "" {
				p := c.chatPrompt
				w.chats.UpdateSettings(ctx, w.user.ID, st.Chat.ID, chat.Settings{SystemPrompt: &p})
			}
			w.reg.Ensure(ctx, st.Assistant.ID)
			w.waitDone(st.Assistant.ID)
			body := w.lastStream()
			msgs := body["messages"].([]any)
			first := msgs[0].(map[string]any)
			if c.want == "" {
				if first["role"] == "system" {
					t.Fatalf("a system message with no prompt set: %v", first)
				}
			} else if first["role"] != "system" || first["content"] != c.want {
				t.Fatalf("system message %v, want %q", first, c.want)
			}
			if body["reasoning_effort"] != "none" {
				t.Fatalf("effort off not sent: %v", body["reasoning_effort"])
			}
		})
	}
}

func TestAnUnavailableModelFailsInWords(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	st, _ := w.chats.Start(ctx, w.user.ID, "hi", chat.Seed{ModelID: w.model})
	w.cat.SetEnabled(ctx, w.model, false)
	w.reg.Ensure(ctx, st.Assistant.ID)
	w.waitDone(st.Assistant.ID)
	m := w.stored(st.Assistant.ID)
	if m.Status != chat.StatusError || !strings.Contains(m.Error, "not available") {
		t.Fatalf("%s %q", m.Status, m.Error)
	}
	if len(w.up.Requests()) > 1 { // the discovery's /models only
		t.Fatal("a request went to a disabled model")
	}
}

func TestTheFirstReplyNamesTheChat(t *testing.T) {
	w := newWorld(t)
	w.up.Script(w.name, llmtest.Reply{Content: "Lembas is elven waybread."}, llmtest.Reply{Reasoning: "a title", ThinkInline: true, Content: "Elven Waybread"})
	st := w.start("What is lembas?")
	g := w.reg.Get(st.Assistant.ID)
	await(w.t, g, func(s Snapshot) bool { return s.Titled })
	if s := g.Snapshot(); s.Title != "Elven Waybread" {
		t.Fatalf("title %q", s.Title)
	}
	c, _ := w.chats.Get(context.Background(), w.user.ID, st.Chat.ID)
	if c.Title != "Elven Waybread" || c.TitleSource != "auto" {
		t.Fatalf("stored title %q %q", c.Title, c.TitleSource)
	}
}

// lastStream is the body of the last streaming request: titles are
// requests too, and may come after it.
func (w *world) lastStream() map[string]any {
	w.t.Helper()
	var body map[string]any
	for _, r := range w.up.Requests() {
		if r.Body["stream"] == true {
			body = r.Body
		}
	}
	if body == nil {
		w.t.Fatal("no streaming request was made")
	}
	return body
}

func mustModel(t *testing.T, w *world) catalog.Model {
	t.Helper()
	m, err := w.cat.GetModel(context.Background(), w.model)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// await waits until cond holds for g's state, failing the test when the
// reply finishes first or 15 s pass.
func await(t testing.TB, g *Generation, cond func(Snapshot) bool) Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, err := g.Await(ctx, cond)
	if err != nil {
		t.Fatalf("waiting on reply %s: %v (last state %+v)", s.MessageID, err, s)
	}
	return s
}
