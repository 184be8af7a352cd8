package web

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"lembas/internal/chat"
	"lembas/internal/llm/llmtest"
	"lembas/internal/reply"
)

// sseEvent is one event read off a stream.
type sseEvent struct{ name, data string }

// readStream reads a reply's stream until it ends (or 20 s pass).
func (b *browser) readStream(t *testing.T, path string) []sseEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", b.site.URL+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream %s: %d %s", path, res.StatusCode, res.Header.Get("Content-Type"))
	}
	var events []sseEvent
	var cur sseEvent
	var data []string
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name != "" || len(data) > 0 {
				cur.data = strings.Join(data, "\n")
				events = append(events, cur)
			}
			cur, data = sseEvent{}, nil
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		}
	}
	return events
}

func names(events []sseEvent) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.name)
	}
	return out
}

var streamAttr = regexp.MustCompile(`data-stream="([^"]+)"`)

func TestAChatFromFirstMessageToFinishedReply(t *testing.T) {
	site := newSite(t)
	b := site.browser()
	b.register("frodo")
	up := llmtest.NewServer(t)
	up.SetModels(llmtest.ShapeOpenAI, llmtest.ModelSpec{ID: "fake"})
	up.Script("fake", llmtest.Reply{Reasoning: "Thinking hard.", Content: "# Lembas\n\nOne bite fills a grown man.\n\n```go\nfmt.Println(1)\n```\n", TokensPerSecond: 60},
		llmtest.Reply{Content: "Elven Waybread"})
	_, model := site.fakeConnectionTo(t, up)

	// Nothing exists until the first message is sent.
	if r := b.get("/chat"); r.StatusCode != 200 || !strings.Contains(r.body, `action="/api/chats/start"`) {
		t.Fatalf("new chat page: %d", r.StatusCode)
	}
	if list, _ := site.chats.List(t.Context(), userID(t, site, "frodo"), 10); len(list) != 0 {
		t.Fatal("opening the composer wrote a chat")
	}
	r := b.post("/api/chats/start", url.Values{"content": {"What is lembas?"}, "model": {model}})
	if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/chat/") {
		t.Fatalf("start: %d %q %s", r.StatusCode, r.Header.Get("Location"), r.body)
	}
	page := b.get(r.Header.Get("Location"))
	m := streamAttr.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatal("the reply in flight carries no data-stream")
	}
	events := b.readStream(t, m[1])
	got := strings.Join(names(events), ",")
	if !strings.Contains(got, "render") || !strings.HasSuffix(strings.TrimSuffix(got, ",title"), "done") {
		t.Fatalf("events: %s", got)
	}
	done := ""
	for _, e := range events {
		if e.name == "done" {
			done = e.data
		}
	}
	if strings.Contains(done, "data-stream") || !strings.Contains(done, "<h") || !strings.Contains(done, "code-block") {
		t.Fatalf("the done bubble: %s", done)
	}
	if !strings.Contains(done, "Thought for") {
		t.Fatal("the reasoning block is missing its duration")
	}
	// The finished page carries no stream, and the chat got its title.
	page = b.get(r.Header.Get("Location"))
	if streamAttr.MatchString(page.body) {
		t.Fatal("a finished reply still carries data-stream")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(b.get(r.Header.Get("Location")).body, "Elven Waybread") {
		if time.Now().After(deadline) {
			t.Fatal("the chat was never named")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestAnotherAccountCannotTouchAChat(t *testing.T) {
	site := newSite(t)
	owner, other, _ := site.people()
	_, model := site.fakeConnection(t, "Local")
	st := site.finishedChat(t, "admin", model)
	base := "/api/chats/" + st.Chat.ID
	for _, c := range []struct{ method, path string }{
		{"GET", "/chat/" + st.Chat.ID},
		{"GET", base + "/messages/" + st.Assistant.ID + "/stream"},
		{"POST", base + "/messages"},
		{"POST", base + "/stop"},
		{"POST", base + "/messages/" + st.Assistant.ID + "/regenerate"},
		{"POST", base + "/messages/" + st.User.ID + "/edit"},
		{"POST", base + "/title"},
		{"POST", base + "/settings"},
	} {
		r := other.do(c.method, c.path, url.Values{"content": {"x"}, "title": {"mine now"}, "system_prompt": {"x"}})
		if r.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s by another account: %d, want 404", c.method, c.path, r.StatusCode)
		}
	}
	c, _ := site.chats.Get(t.Context(), userID(t, site, "admin"), st.Chat.ID)
	msgs, _ := site.chats.Messages(t.Context(), st.Chat.ID)
	if c.Title != "" || c.SystemPrompt != "" || len(msgs) != 2 {
		t.Fatal("another account changed the chat")
	}
	if r := owner.get("/chat/" + st.Chat.ID); r.StatusCode != 200 {
		t.Fatalf("owner: %d", r.StatusCode)
	}
}

func TestSendWhileWritingQueuesAndStopKeepsTheQueue(t *testing.T) {
	site := newSite(t)
	b := site.browser()
	b.register("sam")
	up := llmtest.NewServer(t)
	up.SetModels(llmtest.ShapeOpenAI, llmtest.ModelSpec{ID: "slow"})
	up.Default(llmtest.Reply{Content: strings.Repeat("potatoes ", 300), TokensPerSecond: 60})
	_, model := site.fakeConnectionTo(t, up)
	r := b.post("/api/chats/start", url.Values{"content": {"Po-tay-toes?"}, "model": {model}})
	chatURL := r.Header.Get("Location")
	id := strings.TrimPrefix(chatURL, "/chat/")

	r = b.post("/api/chats/"+id+"/messages", url.Values{"content": {"And fish?"}}, "HX-Request", "true")
	if r.StatusCode != 200 || !strings.Contains(r.body, "Waiting to send") || streamAttr.MatchString(r.body) {
		t.Fatalf("a message while a reply is written must come back queued, with no stream: %d %s", r.StatusCode, r.body)
	}
	// Let some of the reply arrive first.
	replyID, _, _ := site.chats.Streaming(t.Context(), id)
	g := site.replies.Get(replyID)
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	if _, err := g.Await(ctx, func(s reply.Snapshot) bool { return s.Content != "" }); err != nil {
		t.Fatal(err)
	}
	if r := b.post("/api/chats/"+id+"/stop", nil, "HX-Request", "true"); r.StatusCode != http.StatusNoContent {
		t.Fatalf("stop: %d", r.StatusCode)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		msgs, _ := site.chats.Messages(t.Context(), id)
		if msgs[1].Status == chat.StatusStopped {
			if msgs[2].Status != chat.StatusQueued {
				t.Fatalf("stop delivered the queue: %+v", msgs[2])
			}
			if msgs[1].Content == "" {
				t.Fatal("stop threw away what arrived")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reply never stopped: %s", msgs[1].Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if page := b.get(chatURL); !strings.Contains(page.body, "Stopped.") || !strings.Contains(page.body, "Withdraw") {
		t.Fatal("the page does not show the stopped reply and the queued turn")
	}
}

func TestStartRefusesAModelYouMayNotUse(t *testing.T) {
	site := newSite(t)
	admin, user, _ := site.people()
	_, model := site.fakeConnection(t, "Local")
	r := admin.post("/admin/groups", url.Values{"name": {"Istari"}})
	group := strings.TrimPrefix(r.Header.Get("Location")[:strings.Index(r.Header.Get("Location"), "?")], "/admin/groups/")
	admin.post("/admin/models/"+model+"/groups", url.Values{"group": {group}})
	r = user.post("/api/chats/start", url.Values{"content": {"Speak, friend"}, "model": {model}})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "not available to you") || !strings.Contains(r.body, "Speak, friend") {
		t.Fatalf("restricted model: %d", r.StatusCode)
	}
	if list, _ := site.chats.List(t.Context(), userID(t, site, "user"), 10); len(list) != 0 {
		t.Fatal("a refused start wrote a chat")
	}
}
