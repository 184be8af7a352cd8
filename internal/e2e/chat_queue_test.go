package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"lembas/internal/chat"
	"lembas/internal/llm/llmtest"
)

// watchStreams makes the page count, at every change of the transcript,
// how many replies are being written at once; maxStreams reads the most.
const watchStreams = `(() => {
	window.e2eMaxStreams = document.querySelectorAll("[data-stream]").length;
	new MutationObserver(() => {
		window.e2eMaxStreams = Math.max(window.e2eMaxStreams, document.querySelectorAll("[data-stream]").length);
	}).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-stream"] });
	return true;
})()`

const maxStreams = `window.e2eMaxStreams`

// turnState is one of the person's turns as the transcript shows it.
type turnState struct {
	ID       string `json:"id"`
	Text     string `json:"text"`
	Waiting  bool   `json:"waiting"`  // says "Waiting to send"
	Withdraw bool   `json:"withdraw"` // offers Withdraw
}

func (tb *tab) turn(t *testing.T, id string) turnState {
	t.Helper()
	return eval[turnState](t, tb, fmt.Sprintf(`(() => { const m = document.getElementById("m-%s");
		if (!m) return { id: "" };
		return { id: m.dataset.message, text: m.querySelector(".msg-text").innerText,
			waiting: m.innerText.includes("Waiting to send"),
			withdraw: [...m.querySelectorAll("button")].some(b => b.textContent.trim() === "Withdraw") } })()`, id))
}

// transcriptOrder lists the transcript's bubbles in order, as "user:ID"
// and "reply:ID".
func (tb *tab) transcriptOrder(t *testing.T) []string {
	t.Helper()
	return eval[[]string](t, tb, `[...document.querySelectorAll("#transcript .msg")].map(m =>
		(m.classList.contains("msg-user") ? "user:" : "reply:") + m.dataset.message)`)
}

func storedOrder(msgs []chat.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		role := "reply:"
		if m.Role == chat.RoleUser {
			role = "user:"
		}
		out[i] = role + m.ID
	}
	return out
}

// TestQueueWhileStreaming sends while a reply is written: the turn waits,
// visibly, with Withdraw; when the reply ends it is delivered and its own
// reply streams, never two at once. A queued turn withdrawn before its
// time is gone from the transcript and never reaches the model.
func TestQueueWhileStreaming(t *testing.T) {
	rig := newChatRig(t)
	tb := rig.tb
	rig.fake.Script(chatModel,
		llmtest.Reply{Content: "Speak, friend, and enter.", TokensPerSecond: 200, Delay: promptDelay},
		llmtest.Reply{Content: "The doors of Durin", Delay: titleDelay},
	)
	chatID := rig.startChat(t, tb, "What is written on the doors?")
	tb.waitFinished(t, tb.lastReplyID(t), 10*time.Second)
	tb.waitTitle(t, "The doors of Durin", 5*time.Second)
	eval[bool](t, tb, watchStreams)

	answerA := "Mellon is the word: " + plainWords(80)
	answerB := "Then the doors open: " + plainWords(50)
	rig.fake.Enqueue(
		llmtest.Reply{Content: answerA, TokensPerSecond: 60},
		llmtest.Reply{Content: answerB, TokensPerSecond: 60},
	)
	tb.sendInChat(t, chatID, "What is the password?")
	userA, a := tb.userIDs(t)[1], tb.lastReplyID(t)
	tb.waitStreamingText(t, a, 20, 10*time.Second)

	// Sent while A is written: it waits.
	tb.sendInChat(t, chatID, "And what happens then?")
	turns := tb.userIDs(t)
	if len(turns) != 3 {
		t.Fatalf("after sending while a reply is written the transcript holds %d turns, want 3", len(turns))
	}
	userB := turns[2]
	if st := tb.turn(t, userB); !st.Waiting || !st.Withdraw {
		t.Errorf("a turn sent while a reply is written shows %+v, want \"Waiting to send\" and Withdraw", st)
	}
	if got := tb.replyIDs(t); got[len(got)-1] != a {
		t.Errorf("a queued turn added a reply: the replies are %q", got)
	}
	if mode := eval[string](t, tb, sendMode); mode != "stop" {
		t.Errorf("after queueing a turn the button is %q, want stop (A is still written)", mode)
	}
	if m := rig.stored(t, userB); m.Status != chat.StatusQueued {
		t.Errorf("the queued turn is stored with status %q", m.Status)
	}
	if got := eval[string](t, tb, `document.querySelector("[data-composer-input]").value`); got != "" {
		t.Errorf("after sending the composer holds %q", got)
	}

	// A ends; B is delivered and its reply streams.
	tb.waitFinished(t, a, 10*time.Second)
	b := ""
	replyAfter := fmt.Sprintf(`(() => { const r = [...document.querySelectorAll("#transcript .msg-assistant")].map(m => m.dataset.message);
		const i = r.indexOf(%q); return i >= 0 && i < r.length - 1 ? r[r.length - 1] : "" })()`, a)
	deadline := time.Now().Add(5 * time.Second)
	for b == "" && time.Now().Before(deadline) {
		b = eval[string](t, tb, replyAfter)
		time.Sleep(15 * time.Millisecond)
	}
	if b == "" {
		t.Fatalf("after A ended no reply to the queued turn appeared; the page says:\n%s", tb.text(t))
	}
	tb.waitStreamingText(t, b, 20, 10*time.Second)
	if st := tb.turn(t, userB); st.Waiting || st.Withdraw {
		t.Errorf("the delivered turn is shown %+v while its reply is written, want it sent: no \"Waiting to send\", no Withdraw", st)
	}
	tb.waitFinished(t, b, 10*time.Second)
	if got := strings.TrimSpace(tb.bodyText(t, b)); got != answerB {
		t.Errorf("the queued turn's reply ends as %q, want %q", got, answerB)
	}
	if n := eval[int](t, tb, maxStreams); n > 1 {
		t.Errorf("%d replies were written at once", n)
	}

	// Delivered in order, one turn per request.
	msgs := rig.storedMessages(t, chatID)
	stored := storedOrder(msgs)
	want := []string{stored[0], stored[1], "user:" + userA, "reply:" + a, "user:" + userB, "reply:" + b}
	if !slices.Equal(stored, want) {
		t.Errorf("stored order %q, want %q", stored, want)
	}
	if got := tb.transcriptOrder(t); !slices.Equal(got, want) {
		t.Errorf("the transcript shows the bubbles in the order %q, want %q (the stored order)", got, want)
	}
	reqs := chatRequests(rig.fake)
	sent := sentMessages(reqs[len(reqs)-1])
	if len(sent) != 5 || sent[4] != "user: And what happens then?" || sent[3] != "assistant: "+answerA {
		t.Errorf("the queued turn's request carried %q, want the conversation with A's answer, then the turn", sent)
	}
	tb.reload(t)
	if got := tb.transcriptOrder(t); !slices.Equal(got, want) {
		t.Errorf("after a reload the transcript's order is %q, want %q", got, want)
	}
	eval[bool](t, tb, watchStreams)
	tb.assertClean(t)

	// Withdrawn before its time: gone, and never sent.
	answerC := "One more: " + plainWords(60)
	rig.fake.Enqueue(llmtest.Reply{Content: answerC, TokensPerSecond: 60})
	tb.sendInChat(t, chatID, "Tell me about Moria.")
	c := tb.lastReplyID(t)
	tb.waitStreamingText(t, c, 20, 10*time.Second)
	const withdrawn = "Actually, never mind the Balrog."
	tb.sendInChat(t, chatID, withdrawn)
	turns = tb.userIDs(t)
	userD := turns[len(turns)-1]
	if st := tb.turn(t, userD); st.Text != withdrawn || !st.Waiting || !st.Withdraw {
		t.Fatalf("the second queued turn shows %+v", st)
	}
	tb.clickFound(t, "the Withdraw button", fmt.Sprintf(`[...document.querySelectorAll("#m-%s button")].find(b => b.textContent.trim() === "Withdraw")`, userD))
	if r := tb.waitForAnswer(t, "POST", "/api/chats/"+chatID+"/messages/"+userD+"/withdraw", 5*time.Second); r.status != 200 {
		t.Fatalf("Withdraw: status %d %s", r.status, r.failure)
	}
	if !tb.poll(2*time.Second, fmt.Sprintf(`!document.getElementById("m-%s")`, userD)) {
		t.Error("the withdrawn turn is still in the transcript")
	}
	if _, err := rig.s.app.Chats.MessageByID(t.Context(), userD); err == nil {
		t.Error("the withdrawn turn is still stored")
	}
	asked := len(chatRequests(rig.fake))
	tb.waitFinished(t, c, 10*time.Second)
	rig.waitStored(t, c, 5*time.Second)
	// Delivery is decided before the reply is marked done: had the turn
	// still been queued, its reply would be on the page by now.
	if ids := tb.replyIDs(t); ids[len(ids)-1] != c {
		t.Errorf("after the withdrawal a reply %s followed %s", ids[len(ids)-1], c)
	}
	if streaming, ok, _ := rig.s.app.Chats.Streaming(t.Context(), chatID); ok {
		t.Errorf("after the withdrawal reply %s is being written", streaming)
	}
	for _, r := range rig.fake.Requests() {
		if strings.Contains(string(r.Raw), withdrawn) {
			t.Errorf("the withdrawn turn reached the model: %s", r.Raw)
		}
	}
	if n := len(chatRequests(rig.fake)); n != asked {
		t.Errorf("%d request(s) went upstream after the withdrawal", n-asked)
	}
	if text := tb.text(t); strings.Contains(text, withdrawn) {
		t.Error("the page still shows the withdrawn turn")
	}
	if n := eval[int](t, tb, maxStreams); n > 1 {
		t.Errorf("%d replies were written at once", n)
	}
	tb.assertClean(t)
}
