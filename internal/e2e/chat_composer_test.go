package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"lembas/internal/llm/llmtest"
)

// composerValue is what the composer's box holds.
const composerValue = `document.querySelector("[data-composer-input]").value`

// composerHeight is the box's height on the page, in CSS pixels.
const composerHeight = `document.querySelector("[data-composer-input]").getBoundingClientRect().height`

// TestComposerKeys works the composer from the keyboard: an empty box does
// not send, Shift+Enter makes a new line without sending, the box grows
// with its lines, Ctrl+Enter sends (once), Enter sends, and the box is
// empty and small again after sending.
func TestComposerKeys(t *testing.T) {
	rig := newChatRig(t)
	tb := rig.tb
	rig.fake.Script(chatModel,
		llmtest.Reply{Content: "Noted.", TokensPerSecond: 200, Delay: promptDelay},
		llmtest.Reply{Content: "Five lines", Delay: titleDelay},
		llmtest.Reply{Content: "Noted again.", TokensPerSecond: 200},
	)
	rig.openNewChat(t, tb)
	tb.focusComposer(t)
	oneLine := eval[float64](t, tb, composerHeight)

	// Nothing to send: Enter, and Enter after spaces, do nothing.
	tb.press(t, kb.Enter)
	tb.press(t, "   ")
	tb.press(t, kb.Enter)
	tb.pressWith(t, modCtrl, kb.Enter)
	if tb.pollCount("POST", "/api/chats/start", 1, 300*time.Millisecond) {
		t.Fatal("an empty composer sent a message")
	}
	if got := tb.location(t); got != "/chat" {
		t.Fatalf("an empty composer left the page for %s", got)
	}
	eval[bool](t, tb, `(document.querySelector("[data-composer-input]").value = "", true)`)

	// Shift+Enter is a new line; the box grows with them.
	tb.press(t, "one")
	if h := eval[float64](t, tb, composerHeight); h != oneLine {
		t.Errorf("with one short line the box is %.0f px high, empty it was %.0f", h, oneLine)
	}
	for _, line := range []string{"two", "three", "four", "five"} {
		tb.pressWith(t, modShift, kb.Enter)
		tb.press(t, line)
	}
	const fiveLines = "one\ntwo\nthree\nfour\nfive"
	if got := eval[string](t, tb, composerValue); got != fiveLines {
		t.Fatalf("after Shift+Enter between lines the box holds %q, want %q", got, fiveLines)
	}
	if tb.pollCount("POST", "/api/chats/start", 1, 300*time.Millisecond) {
		t.Fatal("Shift+Enter sent the message")
	}
	if h := eval[float64](t, tb, composerHeight); h < oneLine*2.5 {
		t.Errorf("with five lines the box is %.0f px high, with one %.0f: it does not grow with its text", h, oneLine)
	}

	// Ctrl+Enter sends, once.
	resp, err := chromedp.RunResponse(tb.ctx, modifiedKeyPresses(modCtrl, kb.Enter))
	if err != nil || resp == nil || resp.Status != 200 {
		t.Fatalf("Ctrl+Enter did not lead to the chat: %v %v", err, resp)
	}
	chatID := tb.chatID(t)
	if n := tb.rec.count("POST", "/api/chats/start"); n != 1 {
		t.Errorf("Ctrl+Enter sent the first message %d times", n)
	}
	// A form sends a textarea's line breaks as CRLF; the server keeps
	// them so. Only the lines matter here.
	lf := strings.NewReplacer("\r\n", "\n")
	msgs := rig.storedMessages(t, chatID)
	if len(msgs) < 1 || lf.Replace(msgs[0].Content) != fiveLines {
		t.Fatalf("the chat's first message is stored as %s, want %q", describe(msgs), fiveLines)
	}
	user, _ := tb.account(t)
	if chats, err := rig.s.app.Chats.List(context.Background(), user.ID, 10); err != nil || len(chats) != 1 {
		t.Errorf("Ctrl+Enter made %d chats (%v), want 1", len(chats), err)
	}
	tb.waitFinished(t, tb.lastReplyID(t), 10*time.Second)
	tb.waitTitle(t, "Five lines", 5*time.Second)
	tb.assertClean(t)

	// In the chat, Ctrl+Enter sends once, and the box empties and shrinks.
	tb.focusComposer(t)
	tb.press(t, "six")
	tb.pressWith(t, modShift, kb.Enter)
	tb.press(t, "seven")
	grown := eval[float64](t, tb, composerHeight)
	sendPath := "/api/chats/" + chatID + "/messages"
	tb.pressWith(t, modCtrl, kb.Enter)
	if !tb.pollCount("POST", sendPath, 1, 5*time.Second) {
		t.Fatal("Ctrl+Enter in the chat sent nothing")
	}
	if r := tb.waitForAnswer(t, "POST", sendPath, 5*time.Second); r.status != 200 {
		t.Fatalf("Ctrl+Enter in the chat: status %d %s", r.status, r.failure)
	}
	if !tb.poll(2*time.Second, composerValue+` === ""`) {
		t.Errorf("after sending the box holds %q, want it empty", eval[string](t, tb, composerValue))
	}
	if h := eval[float64](t, tb, composerHeight); h >= grown || h != oneLine {
		t.Errorf("after sending the box is %.0f px high; with two lines it was %.0f, empty %.0f", h, grown, oneLine)
	}
	if !eval[bool](t, tb, `document.activeElement === document.querySelector("[data-composer-input]")`) {
		t.Error("after sending the focus left the composer")
	}
	tb.waitFinished(t, tb.lastReplyID(t), 10*time.Second)
	msgs = rig.storedMessages(t, chatID)
	var turns []string
	for _, m := range msgs {
		if m.Role == "user" {
			turns = append(turns, lf.Replace(m.Content))
		}
	}
	if strings.Join(turns, "|") != fiveLines+"|six\nseven" {
		t.Errorf("the person's stored turns are %q, want the five lines and then \"six\\nseven\" once", turns)
	}
	if n := tb.rec.count("POST", sendPath); n != 1 {
		t.Errorf("Ctrl+Enter in the chat sent %d requests, want 1", n)
	}
	tb.assertClean(t)
}
