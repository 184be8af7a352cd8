package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp/kb"

	"lembas/internal/auth"
	"lembas/internal/catalog"
	"lembas/internal/chat"
	"lembas/internal/llm/llmtest"
)

// Helpers for the chat tests: a site with one model on a scripted fake, a
// chat started through the browser, and readings of the transcript.

// chatModel is the one model the chat tests talk to, as the fake lists it
// and expects it named in a request.
const chatModel = "elrond-13b"

// titleDelay is how long the fake takes to name a chat, as a model does.
// A title made faster than the stream's next frame (100 ms) never reaches
// the page: see TestTitleArrivesWhenNamedAtOnce.
const titleDelay = 300 * time.Millisecond

// promptDelay is how long the fake takes before a quick first reply's
// first token. The chat page must be showing the reply, and following its
// stream, before it ends: a reply that ends before the page loads is shown
// finished, with no stream to bring the chat's title afterwards.
const promptDelay = 400 * time.Millisecond

// chatRig is a running LLeMbas with the first account signed in in tb and
// one model, served by fake.
type chatRig struct {
	s     *site
	tb    *tab
	fake  *llmtest.Server
	model catalog.Model
}

func newChatRig(t *testing.T) *chatRig {
	t.Helper()
	s := startSite(t)
	tb := s.openTab(t)
	tb.registerFirstAccount(t)
	fake := llmtest.NewServer(t)
	fake.SetModels(llmtest.ShapeOpenAI, llmtest.ModelSpec{ID: chatModel})
	_, models := addConnection(t, s, "Rivendell", fake)
	if len(models) != 1 {
		t.Fatalf("%d models listed, want 1", len(models))
	}
	return &chatRig{s: s, tb: tb, fake: fake, model: models[0]}
}

// startChat opens the new-chat screen in tb, chooses the model in the
// picker, types text into the composer and presses Enter, and returns the
// id of the chat it lands on.
func (rig *chatRig) startChat(t *testing.T, tb *tab, text string) string {
	t.Helper()
	rig.openNewChat(t, tb)
	tb.focusComposer(t)
	tb.press(t, text)
	if status := tb.pressAndLoad(t, kb.Enter); status != 200 {
		t.Fatalf("sending the first message ended on status %d", status)
	}
	return tb.chatID(t)
}

// chatID is the id of the chat the tab shows, from its address.
func (tb *tab) chatID(t *testing.T) string {
	t.Helper()
	path := tb.location(t)
	id, ok := strings.CutPrefix(path, "/chat/")
	if !ok || id == "" || strings.Contains(id, "/") {
		t.Fatalf("the tab is on %s, want a chat; the page says:\n%s", path, tb.text(t))
	}
	return id
}

// openNewChat opens the new-chat screen in tb and chooses the model in
// the picker.
func (rig *chatRig) openNewChat(t *testing.T, tb *tab) {
	t.Helper()
	if status := tb.open(t, "/chat"); status != 200 {
		t.Fatalf("/chat: status %d", status)
	}
	tb.click(t, "[data-picker-button]")
	option := "#model-" + rig.model.ID
	if !tb.poll(5*time.Second, fmt.Sprintf(`(() => { const o = document.querySelector(%q); return !!o && o.getBoundingClientRect().height > 0 })()`, option)) {
		t.Fatal("the model picker on /chat did not open")
	}
	tb.click(t, option)
	if got := eval[string](t, tb, `document.querySelector("#composer [data-picker-value]").value`); got != rig.model.ID {
		t.Fatalf("the picker holds %q after choosing %q", got, rig.model.ID)
	}
}

// focusComposer puts the focus in the composer's box, as a click would.
func (tb *tab) focusComposer(t *testing.T) {
	t.Helper()
	tb.click(t, "[data-composer-input]")
	if !eval[bool](t, tb, `document.activeElement === document.querySelector("[data-composer-input]")`) {
		t.Fatal("clicking the composer's box did not focus it")
	}
}

// sendInChat types text into the composer of the open chat and presses
// Enter; the page stays, the server answers the htmx request and the turn
// appears at the end of the transcript.
func (tb *tab) sendInChat(t *testing.T, chatID, text string) {
	t.Helper()
	turns := len(tb.userIDs(t))
	before := tb.rec.count("POST", "/api/chats/"+chatID+"/messages")
	tb.focusComposer(t)
	tb.press(t, text)
	tb.press(t, kb.Enter)
	if !tb.pollCount("POST", "/api/chats/"+chatID+"/messages", before+1, 5*time.Second) {
		t.Fatalf("Enter in the composer sent nothing to /api/chats/%s/messages", chatID)
	}
	if r := tb.waitForAnswer(t, "POST", "/api/chats/"+chatID+"/messages", 5*time.Second); r.status != 200 {
		t.Fatalf("sending %q: status %d %s", text, r.status, r.failure)
	}
	// The answer is in; its bubbles are swapped in a moment later.
	if !tb.poll(5*time.Second, fmt.Sprintf(`document.querySelectorAll("#transcript .msg-user").length > %d`, turns)) {
		t.Fatalf("sending %q added no turn to the transcript", text)
	}
}

// pollCount waits until the page has sent at least n method requests to
// path.
func (tb *tab) pollCount(method, path string, n int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if tb.rec.count(method, path) >= n {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return tb.rec.count(method, path) >= n
}

// replyIDs lists the ids of the replies in the transcript, in order.
func (tb *tab) replyIDs(t *testing.T) []string {
	t.Helper()
	return eval[[]string](t, tb, `[...document.querySelectorAll("#transcript .msg-assistant")].map(m => m.dataset.message)`)
}

// userIDs lists the ids of the person's turns in the transcript, in order.
func (tb *tab) userIDs(t *testing.T) []string {
	t.Helper()
	return eval[[]string](t, tb, `[...document.querySelectorAll("#transcript .msg-user")].map(m => m.dataset.message)`)
}

// lastReplyID is the id of the last reply in the transcript.
func (tb *tab) lastReplyID(t *testing.T) string {
	t.Helper()
	ids := tb.replyIDs(t)
	if len(ids) == 0 {
		t.Fatalf("the transcript holds no reply; the page says:\n%s", tb.text(t))
	}
	return ids[len(ids)-1]
}

// bodyText is what reply id shows as its answer.
func (tb *tab) bodyText(t *testing.T, id string) string {
	t.Helper()
	return eval[string](t, tb, fmt.Sprintf(`(() => { const b = document.getElementById(%q); return b ? b.innerText : "" })()`, "body-"+id))
}

// noStream is true when no reply on the page is being written any more.
const noStream = `!document.querySelector("[data-stream]")`

// sendMode is the mode of the composer's one button: "send" or "stop".
const sendMode = `document.getElementById("composer-send").dataset.mode`

// waitFinished waits until reply id is shown finished: its bubble is on
// the page and no longer streams.
func (tb *tab) waitFinished(t *testing.T, id string, within time.Duration) {
	t.Helper()
	expr := fmt.Sprintf(`(() => { const m = document.getElementById(%q); return !!m && !m.hasAttribute("data-stream") })()`, "m-"+id)
	if !tb.poll(within, expr) {
		t.Fatalf("reply %s was not shown finished within %s; the page says:\n%s", id, within, tb.text(t))
	}
}

// waitStreamingText waits until reply id shows at least n characters
// while it is still being written, and returns what it shows.
func (tb *tab) waitStreamingText(t *testing.T, id string, n int, within time.Duration) string {
	t.Helper()
	expr := fmt.Sprintf(`(() => { const m = document.getElementById(%q), b = document.getElementById(%q);
		return !!m && m.hasAttribute("data-stream") && !!b && b.innerText.length >= %d })()`, "m-"+id, "body-"+id, n)
	if !tb.poll(within, expr) {
		t.Fatalf("reply %s did not show %d characters while streaming within %s; it shows %q", id, n, within, tb.bodyText(t, id))
	}
	return tb.bodyText(t, id)
}

// stored reads a message as the server stored it.
func (rig *chatRig) stored(t *testing.T, id string) chat.Message {
	t.Helper()
	m, err := rig.s.app.Chats.MessageByID(context.Background(), id)
	if err != nil {
		t.Fatalf("message %s: %v", id, err)
	}
	return m
}

// storedMessages reads a chat's messages as the server stored them.
func (rig *chatRig) storedMessages(t *testing.T, chatID string) []chat.Message {
	t.Helper()
	msgs, err := rig.s.app.Chats.Messages(context.Background(), chatID)
	if err != nil {
		t.Fatalf("messages of %s: %v", chatID, err)
	}
	return msgs
}

// waitStored waits until the server has stored reply id as finished.
func (rig *chatRig) waitStored(t *testing.T, id string, within time.Duration) chat.Message {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		m := rig.stored(t, id)
		if m.Status != chat.StatusStreaming {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("reply %s is still being written after %s; it has %q", id, within, m.Content)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// chatRequests are the streamed completions the fake received: the
// replies, without the title requests.
func chatRequests(fake *llmtest.Server) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range fake.Requests() {
		if r.Path == "/v1/chat/completions" && r.Body["stream"] == true {
			out = append(out, r)
		}
	}
	return out
}

// titleRequests are the completions the fake received to name a chat.
func titleRequests(fake *llmtest.Server) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range fake.Requests() {
		if r.Path == "/v1/chat/completions" && r.Body["stream"] != true {
			out = append(out, r)
		}
	}
	return out
}

// sentMessages are the messages of a completion request, as role: content.
func sentMessages(r llmtest.Request) []string {
	list, _ := r.Body["messages"].([]any)
	out := make([]string, 0, len(list))
	for _, item := range list {
		m, _ := item.(map[string]any)
		role, _ := m["role"].(string)
		content, _ := m["content"].(string)
		out = append(out, role+": "+content)
	}
	return out
}

// waitTitle waits until the chat's heading shows want.
func (tb *tab) waitTitle(t *testing.T, want string, within time.Duration) {
	t.Helper()
	expr := fmt.Sprintf(`(() => { const i = document.querySelector("[data-title-input]"); return !!i && i.value === %q })()`, want)
	if !tb.poll(within, expr) {
		t.Fatalf("the heading did not change to %q within %s; it shows %q", want, within, tb.heading(t))
	}
}

// heading is the chat's title as the heading shows it.
func (tb *tab) heading(t *testing.T) string {
	t.Helper()
	return eval[string](t, tb, `(() => { const i = document.querySelector("[data-title-input]"); return i ? i.value : "(no title input)" })()`)
}

// plainWords makes a reply of n plain words, numbered so that any prefix of it
// is recognisable and no two prefixes are alike.
func plainWords(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "w%d", i)
	}
	return b.String()
}

// sentCount says how many requests the page has sent so far, for since.
func (r *recorder) sentCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sent)
}

// since returns the requests sent after the first n.
func (r *recorder) since(n int) []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []request
	for _, req := range r.sent[min(n, len(r.sent)):] {
		out = append(out, *req)
	}
	return out
}

// pagesAnswer is the reply on the chat page TestEveryPageLoadsClean
// visits: a list, a code block with a line far wider than a phone, and a
// long unbroken address in the prose.
const pagesAnswer = lembasAnswer + "\n\n" +
	"```python\n" +
	"print(\"" + "one small bite of lembas fills the stomach of a grown man for a whole day of marching " + "\")\n" +
	"```\n\n" +
	"See https://example.org/a/very/long/address/that/does/not/break/anywhere/on/its/own/lembas-waybread-of-the-elves-of-lorien for more."

// finishedChat makes a chat through the Go API whose one reply, from
// model on fake, is finished: thought about first, with a code block and
// metrics. It returns the chat's id.
func finishedChat(t *testing.T, s *site, user auth.User, fake *llmtest.Server, model catalog.Model) string {
	t.Helper()
	ctx := context.Background()
	fake.Default(llmtest.Reply{Reasoning: lembasReasoning, Content: pagesAnswer, Usage: true})
	st, err := s.app.Chats.Start(ctx, user.ID, "What is lembas, and how long does it keep?",
		chat.Seed{ModelID: model.ID, ModelName: model.Name()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.app.Replies.Ensure(ctx, st.Assistant.ID); err != nil {
		t.Fatal(err)
	}
	s.app.Replies.Wait() // the reply and its title
	m, err := s.app.Chats.MessageByID(ctx, st.Assistant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != chat.StatusDone || m.Reasoning == "" || !strings.Contains(m.HTML, "code-block") {
		t.Fatalf("the chat's reply is stored with status %q, %d bytes of reasoning and no code block: %q", m.Status, len(m.Reasoning), m.Error)
	}
	return st.Chat.ID
}

// expectProblems takes what the page reported and fails t for anything
// that does not mention one of the expected strings: a request the test
// made to be refused is logged by the browser as a failed load.
func (tb *tab) expectProblems(t *testing.T, expected ...string) {
	t.Helper()
	eval[bool](t, tb, `true`) // a round trip: every report before it is in
	for _, p := range tb.rec.take() {
		ok := false
		for _, e := range expected {
			if strings.Contains(p, e) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("the browser reported: %s", p)
		}
	}
}
