package chat

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lembas/internal/auth"
	"lembas/internal/db"
	"lembas/internal/fault"
	"lembas/internal/llm"
)

type fixture struct {
	s     *Service
	alice string
	bob   string
}

func setup(t *testing.T) fixture {
	t.Helper()
	d, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	a := auth.New(d, auth.Options{Params: auth.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}})
	alice, err := a.Register(context.Background(), "alice", "password1", true)
	if err != nil {
		t.Fatal(err)
	}
	bob, _ := a.Register(context.Background(), "bob", "password1", true)
	// A clock that moves a millisecond each call keeps rows in order.
	var tick atomic.Int64
	base := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return base.Add(time.Duration(tick.Add(5)) * time.Millisecond) }
	return fixture{s: New(d, now), alice: alice.ID, bob: bob.ID}
}

func TestStartWritesChatTurnAndPlaceholderTogether(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	temp := 0.3
	st, err := f.s.Start(ctx, f.alice, "Hello", Seed{ModelID: "m1", ModelName: "Model", Effort: "high", Temperature: &temp})
	if err != nil {
		t.Fatal(err)
	}
	if st.Chat.Effort != "high" || *st.Chat.Temperature != 0.3 || st.Assistant.Status != StatusStreaming {
		t.Fatalf("started: %+v", st)
	}
	msgs, _ := f.s.Messages(ctx, st.Chat.ID)
	if len(msgs) != 2 || msgs[0].ID != st.User.ID || msgs[1].ID != st.Assistant.ID {
		t.Fatalf("messages: %+v", msgs)
	}
	if _, err := f.s.Get(ctx, f.bob, st.Chat.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another account read the chat: %v", err)
	}
	if _, err := f.s.Start(ctx, f.alice, "   ", Seed{ModelID: "m1"}); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("empty message: %v", err)
	}
	if _, err := f.s.Start(ctx, f.alice, "x", Seed{}); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("no model: %v", err)
	}
}

func TestQueueWhileAReplyIsWritten(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	st, _ := f.s.Start(ctx, f.alice, "one", Seed{ModelID: "m1"})
	sent, err := f.s.Send(ctx, f.alice, st.Chat.ID, "two", "Model")
	if err != nil || !sent.Queued || sent.Assistant.ID != "" {
		t.Fatalf("second message while streaming: %+v %v", sent, err)
	}
	third, _ := f.s.Send(ctx, f.alice, st.Chat.ID, "three", "Model")
	if !third.Queued {
		t.Fatal("third not queued")
	}
	// Nothing is delivered while the reply is still being written.
	if _, ok, _ := f.s.DeliverNext(ctx, st.Chat.ID, "Model"); ok {
		t.Fatal("delivered while streaming")
	}
	f.s.Finish(ctx, st.Assistant.ID, Final{Content: "reply one", Status: StatusDone})
	next, ok, err := f.s.DeliverNext(ctx, st.Chat.ID, "Model")
	if err != nil || !ok {
		t.Fatalf("deliver: %v %v", ok, err)
	}
	msgs, _ := f.s.Messages(ctx, st.Chat.ID)
	var order []string
	for _, m := range msgs {
		order = append(order, m.Role+":"+m.Content+":"+m.Status)
	}
	want := "user:one:done assistant:reply one:done user:two:done assistant::streaming user:three:queued"
	if strings.Join(order, " ") != want {
		t.Fatalf("order:\n%s\nwant\n%s", strings.Join(order, " "), want)
	}
	if msgs[3].ID != next.ID {
		t.Fatal("the placeholder is not the delivered reply")
	}
	// Withdraw the still-queued one; another account cannot.
	if err := f.s.Withdraw(ctx, f.bob, st.Chat.ID, third.User.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("bob withdrew: %v", err)
	}
	if err := f.s.Withdraw(ctx, f.alice, st.Chat.ID, third.User.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.s.Withdraw(ctx, f.alice, st.Chat.ID, msgs[0].ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("withdrew a sent turn: %v", err)
	}
	if _, err := f.s.Send(ctx, f.bob, st.Chat.ID, "hi", "M"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("bob sent into alice's chat: %v", err)
	}
}

func TestRewindDeletesEverythingAfter(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	st, _ := f.s.Start(ctx, f.alice, "first", Seed{ModelID: "m1"})
	f.s.Finish(ctx, st.Assistant.ID, Final{Content: "a1", Status: StatusDone})
	s2, _ := f.s.Send(ctx, f.alice, st.Chat.ID, "second", "M")
	f.s.Finish(ctx, s2.Assistant.ID, Final{Content: "a2", Status: StatusDone})

	p, err := f.s.Rewind(ctx, f.alice, st.Chat.ID, st.User.ID, "first, edited", "M")
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := f.s.Messages(ctx, st.Chat.ID)
	if len(msgs) != 2 || msgs[0].Content != "first, edited" || msgs[1].ID != p.ID || msgs[1].Status != StatusStreaming {
		t.Fatalf("after rewind: %+v", msgs)
	}
	if _, err := f.s.Rewind(ctx, f.alice, st.Chat.ID, p.ID, "x", "M"); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("rewound a reply: %v", err)
	}
	if _, err := f.s.Rewind(ctx, f.bob, st.Chat.ID, st.User.ID, "x", "M"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("bob rewound: %v", err)
	}
}

func TestRegenerateResetsTheLastReplyOnly(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	st, _ := f.s.Start(ctx, f.alice, "q", Seed{ModelID: "m1"})
	n := 5
	f.s.Finish(ctx, st.Assistant.ID, Final{Content: "answer", HTML: "<p>answer</p>", Reasoning: "hmm", Status: StatusDone,
		Metrics: Metrics{CompletionTokens: &n}})
	m, err := f.s.ResetReply(ctx, f.alice, st.Chat.ID, st.Assistant.ID, "M")
	if err != nil || m.Content != "" || m.Reasoning != "" || m.Status != StatusStreaming || m.Metrics.CompletionTokens != nil {
		t.Fatalf("reset: %+v %v", m, err)
	}
	f.s.Finish(ctx, st.Assistant.ID, Final{Content: "again", Status: StatusDone})
	s2, _ := f.s.Send(ctx, f.alice, st.Chat.ID, "q2", "M")
	f.s.Finish(ctx, s2.Assistant.ID, Final{Content: "a2", Status: StatusDone})
	if _, err := f.s.ResetReply(ctx, f.alice, st.Chat.ID, st.Assistant.ID, "M"); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("reset an earlier reply: %v", err)
	}
}

// A cancelled generation's last write must not land on a reply that was
// reset and is being written again... nor on a finished one.
func TestFinishWritesOnlyAReplyBeingWritten(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	st, _ := f.s.Start(ctx, f.alice, "q", Seed{ModelID: "m1"})
	if ok, _ := f.s.Finish(ctx, st.Assistant.ID, Final{Content: "first", Status: StatusDone}); !ok {
		t.Fatal("first finish did not write")
	}
	if ok, _ := f.s.Finish(ctx, st.Assistant.ID, Final{Content: "late", Status: StatusStopped}); ok {
		t.Fatal("a second finish overwrote the reply")
	}
	if err := f.s.SavePartial(ctx, st.Assistant.ID, "partial", ""); err != nil {
		t.Fatal(err)
	}
	m, _ := f.s.Message(ctx, f.alice, st.Chat.ID, st.Assistant.ID)
	if m.Content != "first" {
		t.Fatalf("content %q", m.Content)
	}
}

func TestMarkInterruptedKeepsWhatArrived(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	st, _ := f.s.Start(ctx, f.alice, "q", Seed{ModelID: "m1"})
	f.s.SavePartial(ctx, st.Assistant.ID, "half an answ", "thinking")
	if n, _ := f.s.MarkInterrupted(ctx); n != 1 {
		t.Fatalf("marked %d", n)
	}
	m, _ := f.s.Message(ctx, f.alice, st.Chat.ID, st.Assistant.ID)
	if m.Status != StatusInterrupted || m.Content != "half an answ" || m.Reasoning != "thinking" {
		t.Fatalf("%+v", m)
	}
}

func TestLadderMostSpecificWinsOutright(t *testing.T) {
	cases := []struct {
		l          Ladder
		text, rung string
	}{
		{Ladder{Chat: "c", Folder: "f", Model: "m", Instance: "i"}, "c", RungChat},
		{Ladder{Folder: "f", Model: "m", Instance: "i"}, "f", RungFolder},
		{Ladder{Chat: "  ", Model: "m", Instance: "i"}, "m", RungModel},
		{Ladder{Instance: "i"}, "i", RungInstance},
		{Ladder{}, "", ""},
	}
	for _, c := range cases {
		if text, rung := c.l.Resolve(); text != c.text || rung != c.rung {
			t.Errorf("%+v: %q %q", c.l, text, rung)
		}
	}
}

func TestBuildRequest(t *testing.T) {
	temp := 0.5
	c := Chat{Effort: "off", Temperature: &temp}
	history := []Message{
		{ID: "1", Role: RoleUser, Content: "hi", Status: StatusDone},
		{ID: "2", Role: RoleAssistant, Content: "hello", Reasoning: "SECRET THOUGHTS", Status: StatusDone},
		{ID: "3", Role: RoleUser, Content: "again", Status: StatusDone},
		{ID: "4", Role: RoleAssistant, Content: "", Status: StatusError},
		{ID: "5", Role: RoleUser, Content: "and again", Status: StatusDone},
		{ID: "6", Role: RoleAssistant, Status: StatusStreaming},
		{ID: "7", Role: RoleUser, Content: "queued later", Status: StatusQueued},
	}
	req := BuildRequest(c, Target{UpstreamName: "up"}, Ladder{Model: "Be kind."}, history, "6")
	var got []string
	for _, m := range req.Messages {
		got = append(got, m.Role+"="+m.Content)
	}
	want := []string{"system=Be kind.", "user=hi", "assistant=hello", "user=again\n\nand again"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("messages:\n%q\nwant\n%q", got, want)
	}
	if req.Model != "up" || req.Effort != "off" || *req.Temperature != 0.5 || req.TopP != nil {
		t.Fatalf("request: %+v", req)
	}
}

func TestSettingsEffortSeedOnModelChange(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	st, _ := f.s.Start(ctx, f.alice, "q", Seed{ModelID: "m1"})
	// No effort: a model change seeds the new model's default.
	newModel := "m2"
	c, err := f.s.UpdateSettings(ctx, f.alice, st.Chat.ID, Settings{ModelID: &newModel, ModelSeed: &Seed{Effort: "low"}})
	if err != nil || c.Effort != "low" || c.ModelID != "m2" {
		t.Fatalf("seeded: %+v %v", c, err)
	}
	// The person clears it: a later model change must not resurrect one.
	none := ""
	f.s.UpdateSettings(ctx, f.alice, st.Chat.ID, Settings{Effort: &none})
	third := "m3"
	c, _ = f.s.UpdateSettings(ctx, f.alice, st.Chat.ID, Settings{ModelID: &third, ModelSeed: &Seed{Effort: "high"}})
	if c.Effort != "" {
		t.Fatalf("a cleared effort was reseeded: %q", c.Effort)
	}
	bad := "extreme"
	if _, err := f.s.UpdateSettings(ctx, f.alice, st.Chat.ID, Settings{Effort: &bad}); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("bad effort: %v", err)
	}
	badTemp := "3"
	if _, err := f.s.UpdateSettings(ctx, f.alice, st.Chat.ID, Settings{Temperature: &badTemp}); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("bad temperature: %v", err)
	}
	prompt := "Answer in Sindarin."
	if c, _ := f.s.UpdateSettings(ctx, f.alice, st.Chat.ID, Settings{SystemPrompt: &prompt}); c.SystemPrompt != prompt {
		t.Fatal("system prompt not stored")
	}
	if _, err := f.s.UpdateSettings(ctx, f.bob, st.Chat.ID, Settings{SystemPrompt: &prompt}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("bob changed settings: %v", err)
	}
}

type fakeCompleter struct {
	content string
	err     error
	got     llm.ChatRequest
}

func (f *fakeCompleter) Complete(_ context.Context, _ llm.Endpoint, req llm.ChatRequest) (llm.Completion, error) {
	f.got = req
	return llm.Completion{Content: f.content}, f.err
}

func TestMakeTitle(t *testing.T) {
	ctx := context.Background()
	fc := &fakeCompleter{content: "<think>The user wants a title for</think>\n\"Second Breakfast Plans.\""}
	title, source := MakeTitle(ctx, fc, llm.Endpoint{}, "m", "What should hobbits eat?", "<think>x</think>Seed cake.")
	if title != "Second Breakfast Plans" || source != "auto" {
		t.Fatalf("title %q %q", title, source)
	}
	if *fc.got.MaxTokens < 1000 || fc.got.Effort != "" || strings.Contains(fc.got.Messages[1].Content, "<think>") {
		t.Fatalf("title request: %+v", fc.got)
	}
	fc = &fakeCompleter{err: errors.New("boom")}
	title, source = MakeTitle(ctx, fc, llm.Endpoint{}, "m", "  Tell me about\nthe Shire", "")
	if title != "Tell me about" || source != "prompt" {
		t.Fatalf("fallback %q %q", title, source)
	}
	fc = &fakeCompleter{content: "<think>only thinking, the budget ran out"}
	if _, source := MakeTitle(ctx, fc, llm.Endpoint{}, "m", "x", ""); source != "prompt" {
		t.Fatal("a reply that was all thinking became a title")
	}
	fc = &fakeCompleter{content: "## **Lembas** is `waybread`\nmore"}
	if title, _ := MakeTitle(ctx, fc, llm.Endpoint{}, "m", "x", ""); title != "Lembas is waybread" {
		t.Fatalf("markdown in a title: %q", title)
	}
	long := strings.Repeat("word ", 40)
	if got := PromptTitle(long); len([]rune(got)) > 61 || !strings.HasSuffix(got, "…") {
		t.Fatalf("long prompt title %q", got)
	}
}
