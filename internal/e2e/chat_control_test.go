package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"lembas/internal/chat"
	"lembas/internal/llm/llmtest"
)

// TestStopKeepsWhatArrived stops a slow reply twice, once with the button
// while it says Stop and once with Esc: each bubble ends marked "Stopped."
// with the text that arrived, stored so, the upstream request is
// cancelled and the button is Send again.
func TestStopKeepsWhatArrived(t *testing.T) {
	rig := newChatRig(t)
	tb := rig.tb
	long := plainWords(600) // a minute at this pace: it will not finish by itself
	rig.fake.Script(chatModel, llmtest.Reply{Content: long, TokensPerSecond: 40})

	chatID := rig.startChat(t, tb, "Tell me everything about the Shire.")
	first := tb.lastReplyID(t)
	stopAndCheck := func(how string, id string, stop func(), gone int) {
		t.Helper()
		tb.waitStreamingText(t, id, 30, 10*time.Second)
		if mode := eval[string](t, tb, sendMode); mode != "stop" {
			t.Fatalf("while the reply is written the composer's button is %q, want stop", mode)
		}
		if label := eval[string](t, tb, `document.getElementById("composer-send").innerText.trim()`); label != "Stop" {
			t.Errorf("while the reply is written the composer's button says %q, want Stop", label)
		}
		stop()
		if !tb.poll(5*time.Second, noStream) {
			t.Fatalf("%s: the reply was still being written 5 s later", how)
		}
		m := rig.waitStored(t, id, 5*time.Second)
		shown := strings.TrimSpace(tb.bodyText(t, id))
		status := eval[string](t, tb, fmt.Sprintf(`document.getElementById("status-%s").innerText.trim()`, id))
		switch {
		case status != "Stopped.":
			t.Errorf("%s: the bubble is marked %q, want %q", how, status, "Stopped.")
		case len(shown) < 30 || !strings.HasPrefix(long, shown):
			t.Errorf("%s: the stopped bubble shows %q, want the beginning of the reply", how, shown)
		case len(shown) >= len(long):
			t.Errorf("%s: the stopped bubble shows the whole reply: it was not stopped", how)
		}
		if m.Status != chat.StatusStopped || m.Error != "" {
			t.Errorf("%s: the reply is stored with status %q and error %q, want %q and none", how, m.Status, m.Error, chat.StatusStopped)
		}
		if strings.TrimSpace(m.Content) != shown {
			t.Errorf("%s: the stored reply is %d bytes and the bubble shows %d: what arrived is not what was kept\nstored: %q\nshown:  %q",
				how, len(m.Content), len(shown), m.Content, shown)
		}
		if !tb.poll(2*time.Second, sendMode+` === "send"`) {
			t.Errorf("%s: after stopping the composer's button is %q, want send", how, eval[string](t, tb, sendMode))
		}
		if label := eval[string](t, tb, `document.getElementById("composer-send").innerText.trim()`); label != "Send" {
			t.Errorf("%s: after stopping the composer's button says %q, want Send", how, label)
		}
		// Stopping is not leaving the endpoint writing to nobody.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := rig.fake.WaitClientsGone(ctx, gone); err != nil {
			t.Errorf("%s: the request upstream was not cancelled: %v", how, err)
		}
		tb.assertClean(t)
	}

	// The button, while it says Stop.
	stopAndCheck("the Stop button", first, func() {
		tb.click(t, "#composer-send")
		if r := tb.waitForAnswer(t, "POST", "/api/chats/"+chatID+"/stop", 5*time.Second); r.status != 204 {
			t.Errorf("Stop: status %d %s", r.status, r.failure)
		}
	}, 1)
	if n := tb.rec.count("POST", "/api/chats/"+chatID+"/messages"); n != 0 {
		t.Errorf("clicking Stop sent the composer's form %d time(s)", n)
	}

	// Esc, with the focus in the composer after sending a second turn.
	tb.sendInChat(t, chatID, "Go on, then.")
	second := tb.lastReplyID(t)
	if second == first {
		t.Fatal("sending a second turn added no reply")
	}
	stopAndCheck("Esc", second, func() { tb.press(t, kb.Escape) }, 2)

	// Both stay stopped, in order; nothing was titled after a stopped reply.
	if got := tb.replyIDs(t); !slices.Equal(got, []string{first, second}) {
		t.Errorf("the transcript's replies are %q, want %q", got, []string{first, second})
	}
	if got := eval[string](t, tb, fmt.Sprintf(`document.getElementById("status-%s").innerText.trim()`, first)); got != "Stopped." {
		t.Errorf("after the second stop the first reply is marked %q", got)
	}
	if n := len(titleRequests(rig.fake)); n != 0 {
		t.Errorf("a chat whose replies were stopped was sent %d title request(s)", n)
	}
	tb.assertClean(t)
}

// TestNavigateAwayAndCloseTheTab leaves a chat while its reply is written:
// navigating away and back, the reply is still running and the transcript
// catches up; closing the tab, the server writes the reply to its end with
// nobody watching, and a new tab shows it finished.
func TestNavigateAwayAndCloseTheTab(t *testing.T) {
	rig := newChatRig(t)
	tb := rig.tb
	first := plainWords(130) // about four seconds at this pace
	second := "Second answer: " + plainWords(100)
	rig.fake.Script(chatModel,
		llmtest.Reply{Content: first, TokensPerSecond: 60},
		llmtest.Reply{Content: "The long walk", Delay: titleDelay},
		llmtest.Reply{Content: second, TokensPerSecond: 60},
	)

	chatID := rig.startChat(t, tb, "Walk with me.")
	id := tb.lastReplyID(t)
	before := tb.waitStreamingText(t, id, 40, 10*time.Second)

	// Away to the settings and back while it is written.
	if status := tb.open(t, "/settings"); status != 200 {
		t.Fatalf("/settings: status %d", status)
	}
	if m := rig.stored(t, id); m.Status != chat.StatusStreaming {
		t.Fatalf("leaving the chat ended its reply: stored with status %q", m.Status)
	}
	if status := tb.open(t, "/chat/"+chatID); status != 200 {
		t.Fatalf("back to the chat: status %d", status)
	}
	if !eval[bool](t, tb, fmt.Sprintf(`document.getElementById("m-%s").hasAttribute("data-stream")`, id)) {
		t.Fatalf("back on the chat the reply is not shown as being written; the page says:\n%s", tb.text(t))
	}
	if mode := eval[string](t, tb, sendMode); mode != "stop" {
		t.Errorf("back on the chat the composer's button is %q, want stop", mode)
	}
	// It catches up at once (the first frame carries all of it so far) and
	// goes on growing.
	caughtUp := fmt.Sprintf(`(() => { const b = document.getElementById("body-%s"); return !!b && b.innerText.trim().length > %d })()`, id, len(before))
	if !tb.poll(2*time.Second, caughtUp) {
		t.Fatalf("back on the chat the reply shows %q, no more than before leaving (%q)", tb.bodyText(t, id), before)
	}
	tb.waitFinished(t, id, 10*time.Second)
	if got := strings.TrimSpace(tb.bodyText(t, id)); got != first {
		t.Errorf("the reply followed after coming back ends as %q, want the whole reply", got)
	}
	tb.waitTitle(t, "The long walk", 5*time.Second)
	tb.assertClean(t)

	// Close the tab in the middle of the next reply.
	tb.sendInChat(t, chatID, "And the second part?")
	id2 := tb.lastReplyID(t)
	tb.waitStreamingText(t, id2, 40, 10*time.Second)
	tb.assertClean(t)
	tb.close()
	if m := rig.stored(t, id2); m.Status != chat.StatusStreaming {
		t.Fatalf("closing the tab ended its reply: stored with status %q", m.Status)
	}
	m := rig.waitStored(t, id2, 10*time.Second)
	if m.Status != chat.StatusDone || m.Content != second {
		t.Errorf("with nobody watching the reply was stored with status %q and %d of %d bytes", m.Status, len(m.Content), len(second))
	}
	if n := rig.fake.ClientsGone(); n != 0 {
		t.Errorf("%d upstream request(s) were cancelled: closing the tab stopped the reply", n)
	}

	// A new tab shows it finished, with nothing left to follow.
	again := rig.s.openTab(t)
	again.signIn(t)
	if status := again.open(t, "/chat/"+chatID); status != 200 {
		t.Fatalf("reopening the chat: status %d", status)
	}
	if n := eval[int](t, again, `document.querySelectorAll("[data-stream]").length`); n != 0 {
		t.Errorf("the reopened chat shows %d reply(ies) still being written", n)
	}
	if got := strings.TrimSpace(again.bodyText(t, id2)); got != second {
		t.Errorf("the reopened chat shows the second reply as %q, want it whole", got)
	}
	if got := again.replyIDs(t); !slices.Equal(got, []string{id, id2}) {
		t.Errorf("the reopened chat's replies are %q, want %q", got, []string{id, id2})
	}
	if mode := eval[string](t, again, sendMode); mode != "send" {
		t.Errorf("the reopened chat's button is %q, want send", mode)
	}
	again.assertClean(t)
}

// TestRegenerateReplacesTheReply regenerates a finished reply: the same
// bubble streams a different answer and ends with only the new text; the
// transcript still holds one turn and one reply, and the request sent
// again does not carry the old answer.
func TestRegenerateReplacesTheReply(t *testing.T) {
	rig := newChatRig(t)
	tb := rig.tb
	oldAnswer := "The old answer: " + plainWords(20)
	newAnswer := "A different answer, written again: " + plainWords(90)
	rig.fake.Script(chatModel,
		llmtest.Reply{Content: oldAnswer, TokensPerSecond: 200, Delay: promptDelay},
		llmtest.Reply{Content: "Second thoughts", Delay: titleDelay},
	)

	chatID := rig.startChat(t, tb, "Say it once.")
	id := tb.lastReplyID(t)
	tb.waitFinished(t, id, 10*time.Second)
	tb.waitTitle(t, "Second thoughts", 5*time.Second)
	if got := strings.TrimSpace(tb.bodyText(t, id)); got != oldAnswer {
		t.Fatalf("the first reply shows %q, want %q", got, oldAnswer)
	}
	tb.assertClean(t)

	rig.fake.Enqueue(llmtest.Reply{Content: newAnswer, TokensPerSecond: 60})
	asked := len(chatRequests(rig.fake))
	tb.click(t, fmt.Sprintf("#m-%s [data-action=regenerate]", id))
	if r := tb.waitForAnswer(t, "POST", "/api/chats/"+chatID+"/messages/"+id+"/regenerate", 5*time.Second); r.status != 200 {
		t.Fatalf("Regenerate: status %d %s", r.status, r.failure)
	}

	// The same bubble streams the new answer, never showing the old one.
	var shown []string
	sawStream := false
	deadline := time.Now().Add(10 * time.Second)
	for {
		type regen struct {
			Bubbles   int    `json:"bubbles"`
			Streaming bool   `json:"streaming"`
			Text      string `json:"text"`
		}
		st := eval[regen](t, tb, fmt.Sprintf(`(() => { const m = document.getElementById("m-%[1]s"), b = document.getElementById("body-%[1]s");
			return { bubbles: document.querySelectorAll("#transcript .msg-assistant").length,
				streaming: !!m && m.hasAttribute("data-stream"), text: b ? b.innerText.trim() : "" } })()`, id))
		if st.Bubbles != 1 {
			t.Fatalf("while regenerating the transcript shows %d replies, want the one being replaced", st.Bubbles)
		}
		if st.Streaming {
			sawStream = true
			if st.Text != "" && (len(shown) == 0 || shown[len(shown)-1] != st.Text) {
				shown = append(shown, st.Text)
			}
		} else if sawStream {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the regenerated reply did not finish within 10 s; it shows %q", st.Text)
		}
		time.Sleep(15 * time.Millisecond)
	}
	if len(shown) < 2 {
		t.Errorf("the regenerated reply showed %d distinct texts while written, want it to stream", len(shown))
	}
	for _, s := range shown {
		if strings.Contains(s, "The old answer") || !strings.HasPrefix(newAnswer, s) {
			t.Errorf("while regenerating the bubble showed %q, which is not the beginning of the new answer", s)
			break
		}
	}
	if got := strings.TrimSpace(tb.bodyText(t, id)); got != newAnswer {
		t.Errorf("the regenerated reply ends as %q, want only the new answer", got)
	}
	if got, want := tb.userIDs(t), 1; len(got) != want {
		t.Errorf("the transcript holds %d turns of the person's, want %d", len(got), want)
	}
	if got := tb.replyIDs(t); !slices.Equal(got, []string{id}) {
		t.Errorf("the transcript's replies are %q, want only %q", got, id)
	}
	if !eval[bool](t, tb, fmt.Sprintf(`!!document.querySelector("#m-%s [data-action=regenerate]")`, id)) {
		t.Error("the regenerated reply offers no Regenerate")
	}

	// Stored: one turn and the one reply, with the new text.
	msgs := rig.storedMessages(t, chatID)
	if len(msgs) != 2 || msgs[1].ID != id || msgs[1].Content != newAnswer || msgs[1].Status != chat.StatusDone {
		t.Errorf("stored after regenerating: %s", describe(msgs))
	}
	// Asked once more, without the old answer in the conversation.
	reqs := chatRequests(rig.fake)
	if len(reqs) != asked+1 {
		t.Fatalf("regenerating sent %d request(s), want 1", len(reqs)-asked)
	}
	if got := sentMessages(reqs[len(reqs)-1]); !slices.Equal(got, []string{"user: Say it once."}) {
		t.Errorf("regenerating sent the conversation %q, want only the person's turn", got)
	}
	tb.reload(t)
	if got := strings.TrimSpace(tb.bodyText(t, id)); got != newAnswer || len(tb.replyIDs(t)) != 1 {
		t.Errorf("after a reload the chat shows %d replies, the last %q", len(tb.replyIDs(t)), got)
	}
	tb.assertClean(t)
}

// describe lists stored messages for a failure message.
func describe(msgs []chat.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		content := m.Content
		if len(content) > 40 {
			content = content[:40] + "…"
		}
		fmt.Fprintf(&b, "\n\t%s %s %s %q", m.ID, m.Role, m.Status, content)
	}
	return b.String()
}

// TestEditRewindsTheConversation edits the first of two exchanges:
// everything after the edited turn goes, a new reply streams, and the
// request the model gets carries the edited text and nothing of the
// second exchange.
func TestEditRewindsTheConversation(t *testing.T) {
	rig := newChatRig(t)
	tb := rig.tb
	const (
		question1 = "Who made the rings?"
		question2 = "And who made the One?"
		edited    = "Who made the three rings of the Elves?"
		answer1   = "Many smiths of Eregion."
		answer2   = "Sauron, in the fires of Orodruin."
	)
	answer3 := "Celebrimbor made the Three alone: " + plainWords(70)
	rig.fake.Script(chatModel,
		llmtest.Reply{Content: answer1, TokensPerSecond: 200, Delay: promptDelay},
		llmtest.Reply{Content: "The rings", Delay: titleDelay},
	)

	chatID := rig.startChat(t, tb, question1)
	tb.waitFinished(t, tb.lastReplyID(t), 10*time.Second)
	tb.waitTitle(t, "The rings", 5*time.Second)
	rig.fake.Enqueue(llmtest.Reply{Content: answer2, TokensPerSecond: 200})
	tb.sendInChat(t, chatID, question2)
	tb.waitFinished(t, tb.lastReplyID(t), 10*time.Second)
	turns, replies := tb.userIDs(t), tb.replyIDs(t)
	if len(turns) != 2 || len(replies) != 2 {
		t.Fatalf("two exchanges show %d turns and %d replies", len(turns), len(replies))
	}
	tb.assertClean(t)

	// Edit the first turn.
	rig.fake.Enqueue(llmtest.Reply{Content: answer3, TokensPerSecond: 60})
	u1 := turns[0]
	form := fmt.Sprintf(`document.querySelector("#m-%s [data-edit-form]")`, u1)
	if !eval[bool](t, tb, form+`.hidden`) {
		t.Fatal("the edit form shows before Edit was clicked")
	}
	tb.click(t, fmt.Sprintf("#m-%s [data-action=edit-message]", u1))
	if !tb.poll(2*time.Second, `!`+form+`.hidden`) {
		t.Fatal("clicking Edit did not show the edit form")
	}
	area := fmt.Sprintf(`document.getElementById("edit-%s")`, u1)
	if !eval[bool](t, tb, `document.activeElement === `+area) || eval[string](t, tb, area+`.value`) != question1 {
		t.Fatalf("the edit box holds %q and has the focus: %v; want the turn's text, focused",
			eval[string](t, tb, area+`.value`), eval[bool](t, tb, `document.activeElement === `+area))
	}
	tb.press(t, strings.Repeat(kb.Backspace, len(question1)))
	tb.press(t, edited)
	if got := eval[string](t, tb, area+`.value`); got != edited {
		t.Fatalf("the edit box holds %q after typing, want %q", got, edited)
	}
	if status := tb.clickAndLoad(t, fmt.Sprintf("#m-%s [data-edit-form] button[type=submit]", u1)); status != 200 {
		t.Fatalf("sending the edit ended on status %d", status)
	}
	if got := tb.location(t); got != "/chat/"+chatID {
		t.Errorf("sending the edit ended on %s, want the chat", got)
	}

	// Everything after the edited turn is gone; a new reply streams.
	if got := tb.userIDs(t); !slices.Equal(got, []string{u1}) {
		t.Errorf("after the edit the person's turns are %q, want only the edited one %q", got, u1)
	}
	if got := eval[string](t, tb, fmt.Sprintf(`document.querySelector("#m-%s .msg-text").innerText`, u1)); got != edited {
		t.Errorf("the edited turn shows %q, want %q", got, edited)
	}
	after := tb.replyIDs(t)
	if len(after) != 1 || slices.Contains(replies, after[0]) {
		t.Fatalf("after the edit the replies are %q, want one new reply (the old were %q)", after, replies)
	}
	p := after[0]
	tb.waitStreamingText(t, p, 20, 10*time.Second)
	tb.waitFinished(t, p, 10*time.Second)
	if got := strings.TrimSpace(tb.bodyText(t, p)); got != answer3 {
		t.Errorf("the new reply ends as %q, want %q", got, answer3)
	}
	if text := tb.text(t); strings.Contains(text, question2) || strings.Contains(text, answer2) || strings.Contains(text, answer1) {
		t.Errorf("after the edit the page still shows the later exchange:\n%s", text)
	}

	// Stored, and asked, the same way.
	msgs := rig.storedMessages(t, chatID)
	if len(msgs) != 2 || msgs[0].ID != u1 || msgs[0].Content != edited || msgs[1].ID != p || msgs[1].Content != answer3 {
		t.Errorf("stored after the edit: %s", describe(msgs))
	}
	last := rig.fake.LastRequest()
	if got := sentMessages(last); !slices.Equal(got, []string{"user: " + edited}) {
		t.Errorf("the request after the edit carried %q, want only the edited turn", got)
	}
	tb.assertClean(t)
}

// regenerateOffers lists the replies that offer Regenerate, by id.
func (tb *tab) regenerateOffers(t *testing.T) []string {
	t.Helper()
	return eval[[]string](t, tb, `[...document.querySelectorAll("#transcript [data-action=regenerate]")].map(b => b.closest(".msg").dataset.message)`)
}

// TestOnlyTheLastReplyOffersRegenerate sends a second turn: while its
// reply is written the first reply no longer offers Regenerate, and a
// regeneration of the first asked for anyway (by a tab opened before the
// second turn) is refused without stopping the reply being written.
func TestOnlyTheLastReplyOffersRegenerate(t *testing.T) {
	rig := newChatRig(t)
	tb := rig.tb
	second := "The second answer, at length: " + plainWords(120)
	rig.fake.Script(chatModel,
		llmtest.Reply{Content: "The first answer.", Delay: promptDelay},
		llmtest.Reply{Content: "Two answers", Delay: titleDelay},
		llmtest.Reply{Content: second, TokensPerSecond: 80},
	)
	chatID := rig.startChat(t, tb, "First, please.")
	first := tb.lastReplyID(t)
	tb.waitFinished(t, first, 10*time.Second)
	tb.waitTitle(t, "Two answers", 5*time.Second)
	if got := tb.regenerateOffers(t); !slices.Equal(got, []string{first}) {
		t.Errorf("with one reply, Regenerate is offered on %q, want %q", got, first)
	}

	tb.sendInChat(t, chatID, "Second, please.")
	next := tb.lastReplyID(t)
	tb.waitStreamingText(t, next, 20, 10*time.Second)
	if got := tb.regenerateOffers(t); len(got) != 0 {
		t.Errorf("while the second reply is written Regenerate is offered on %q, want nowhere (only the last reply may be regenerated, and it is not finished)", got)
	}

	// A stale page asks anyway: refused, and the reply goes on.
	path := "/api/chats/" + chatID + "/messages/" + first + "/regenerate"
	status, err := chromedp.Run(tb.ctx, chromedp.Evaluate[int](
		fmt.Sprintf(`fetch(%q, { method: "POST", headers: { "HX-Request": "true" } }).then(r => r.status)`, path),
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("ask to regenerate the first reply: %v", err)
	}
	if status != 422 {
		t.Errorf("regenerating a reply that is not the last answered %d, want 422", status)
	}
	tb.expectProblems(t, path)
	if m := rig.stored(t, next); m.Status != chat.StatusStreaming {
		t.Errorf("a refused regeneration of an earlier reply ended the reply being written: it is stored %q with %d of %d bytes",
			m.Status, len(m.Content), len(second))
	}
	tb.waitFinished(t, next, 10*time.Second)
	if m := rig.stored(t, next); m.Status != chat.StatusDone || m.Content != second {
		t.Errorf("the second reply ended %q with %d of %d bytes, want it finished", m.Status, len(m.Content), len(second))
	}
	if got := tb.regenerateOffers(t); !slices.Equal(got, []string{next}) {
		t.Errorf("after the second reply, Regenerate is offered on %q, want only %q", got, next)
	}
	tb.assertClean(t)
}
