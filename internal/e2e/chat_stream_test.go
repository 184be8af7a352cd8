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

// The first reply of the chat tests: a list and a code block, thought
// about first.
const (
	lembasReasoning = "The person asks about lembas. I should say what it is, how long it keeps, " +
		"and give the little program they asked for. Keep it short and plain; a list reads best " +
		"for the keeping, and the code goes in a fenced block so it can be copied."
	lembasAnswer = "**Lembas** is the waybread of the Elves of Lórien, given to the Fellowship " +
		"when they left the Golden Wood.\n\n" +
		"How it keeps:\n\n" +
		"- One small bite fills a grown man for a long day's march.\n" +
		"- Wrapped in its mallorn leaves it keeps fresh for many days.\n" +
		"- It tastes far better than cram, which is the point of it.\n\n" +
		"Counting the days of a journey:\n\n" +
		"```go\n" +
		"package main\n\n" +
		"import \"fmt\"\n\n" +
		"func main() {\n" +
		"\tfor day := 1; day <= 3; day++ {\n" +
		"\t\tfmt.Println(\"one small bite, day\", day)\n" +
		"\t}\n" +
		"}\n" +
		"```\n\n" +
		"Sam kept the last of it for the climb up Mount Doom, and it was enough."
	lembasTitle = "Lembas and its keeping"
)

// streamState is what a reply shows at one moment while it is written.
type streamState struct {
	Streaming    bool   `json:"streaming"`    // the bubble still carries data-stream
	Len          int    `json:"len"`          // characters its answer shows
	Mode         string `json:"mode"`         // the composer button's mode
	Streams      int    `json:"streams"`      // [data-stream] on the page
	Thought      bool   `json:"thought"`      // the reasoning <details> is there
	Open         bool   `json:"open"`         // and open
	Label        string `json:"label"`        // its summary
	ThoughtLen   int    `json:"thoughtLen"`   // characters of reasoning it holds
	Heading      string `json:"heading"`      // the chat's title
	ThinkElement string `json:"thinkElement"` // an identity of the <details>, to see it replaced
}

func readStream(t *testing.T, tb *tab, id string) streamState {
	t.Helper()
	return eval[streamState](t, tb, fmt.Sprintf(`(() => {
		const id = %q;
		const m = document.getElementById("m-" + id), b = document.getElementById("body-" + id);
		const d = document.querySelector("#reasoning-" + id + " details");
		if (d && !d.e2eIdentity) d.e2eIdentity = String(Math.random());
		const title = document.querySelector("[data-title-input]");
		return {
			streaming: !!m && m.hasAttribute("data-stream"),
			len: b ? b.textContent.length : -1,
			mode: document.getElementById("composer-send").dataset.mode || "",
			streams: document.querySelectorAll("[data-stream]").length,
			thought: !!d,
			open: !!d && d.open,
			label: d ? d.querySelector("summary").textContent.trim() : "",
			thoughtLen: d ? d.querySelector(".reasoning-body").textContent.length : 0,
			heading: title ? title.value : "",
			thinkElement: d ? d.e2eIdentity : "",
		};
	})()`, id))
}

// TestReplyStreamsAndFinishes sends the first message of a chat from the
// new-chat screen and watches the reply being written: the answer grows
// frame by frame, the button is Stop meanwhile, the reasoning arrives in a
// <details> that stays open once the reader opens it, and at the end the
// code is highlighted with a Copy button, the metrics are shown and the
// heading takes the title the model gave.
func TestReplyStreamsAndFinishes(t *testing.T) {
	rig := newChatRig(t)
	tb := rig.tb
	rig.fake.Script(chatModel,
		llmtest.Reply{Reasoning: lembasReasoning, Content: lembasAnswer, TokensPerSecond: 30, Usage: true},
		llmtest.Reply{Content: lembasTitle, Delay: titleDelay},
	)

	chatID := rig.startChat(t, tb, "What is lembas, and how long does it keep?")
	id := tb.lastReplyID(t)
	if got := tb.heading(t); got != "New chat" {
		t.Errorf("a chat whose first reply is still being written is headed %q, want %q", got, "New chat")
	}

	// Watch it being written, opening the reasoning as soon as it shows.
	lengths := map[int]bool{}
	var (
		opened        bool
		openedAt      streamState
		framesAfter   bool // a later reasoning frame arrived while open
		closedBy      []string
		notStop       []string
		doubleStreams int
		thinkSeen     time.Time // the reasoning first showed
		answerSeen    time.Time // the answer first showed
	)
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := readStream(t, tb, id)
		if !st.Streaming {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reply was still being written after 20 s; it shows %d characters", st.Len)
		}
		if st.Thought && thinkSeen.IsZero() {
			thinkSeen = time.Now()
		}
		if st.Len > 0 {
			lengths[st.Len] = true
			if answerSeen.IsZero() {
				answerSeen = time.Now()
			}
		}
		if st.Mode != "stop" {
			notStop = append(notStop, fmt.Sprintf("%q at %d characters", st.Mode, st.Len))
		}
		if st.Streams > 1 {
			doubleStreams++
		}
		switch {
		case st.Thought && !opened:
			tb.click(t, "#reasoning-"+id+" summary")
			opened = true
			openedAt = readStream(t, tb, id)
			if !openedAt.Open {
				t.Fatalf("clicking the reasoning's summary did not open it; it is labelled %q", openedAt.Label)
			}
		case opened:
			if !st.Open {
				closedBy = append(closedBy, fmt.Sprintf("closed at %d characters of reasoning, labelled %q", st.ThoughtLen, st.Label))
			}
			if st.ThoughtLen > openedAt.ThoughtLen || st.Label != openedAt.Label {
				framesAfter = true
			}
		}
		time.Sleep(15 * time.Millisecond)
	}

	if len(lengths) < 3 {
		t.Errorf("the answer showed %d distinct lengths while it was written, want at least 3: it arrived at once, not as it was written", len(lengths))
	}
	if len(notStop) > 0 {
		t.Errorf("while the reply was written the composer's button was not Stop: %s", strings.Join(notStop, "; "))
	}
	if doubleStreams > 0 {
		t.Errorf("%d readings saw two replies streaming at once", doubleStreams)
	}
	switch {
	case !opened:
		t.Error("no reasoning <details> appeared while the reply was written")
	case !framesAfter:
		t.Errorf("no reasoning frame arrived after the reasoning was opened at %d characters: the test proves nothing", openedAt.ThoughtLen)
	case len(closedBy) > 0:
		t.Errorf("the reasoning the reader opened was closed again by a later frame (%d readings): %s",
			len(closedBy), strings.Join(closedBy[:min(3, len(closedBy))], "; "))
	}

	// Finished: nothing streams, the button is Send again. The reader is
	// still reading the reasoning: the finished bubble keeps it open.
	tb.waitFinished(t, id, 5*time.Second)
	if !eval[bool](t, tb, noStream) {
		t.Error("after the reply finished something on the page still carries data-stream")
	}
	if opened && !eval[bool](t, tb, `(() => { const d = document.querySelector("#reasoning-`+id+` details"); return !!d && d.open })()`) {
		t.Error("the reasoning the reader opened was closed when the reply finished (the done frame replaced the bubble)")
	}
	if !tb.poll(2*time.Second, sendMode+` === "send"`) {
		t.Errorf("after the reply the composer's button is %q, want send", eval[string](t, tb, sendMode))
	}
	checkFinishedLembas(t, tb, id)
	label := eval[string](t, tb, `document.querySelector("#reasoning-`+id+` summary").textContent.trim()`)
	if !thinkSeen.IsZero() && !answerSeen.IsZero() {
		checkThoughtFor(t, label, answerSeen.Sub(thinkSeen))
	}

	// The title arrives on the same stream after the reply.
	tb.waitTitle(t, lembasTitle, 10*time.Second)
	if got := eval[string](t, tb, `document.title`); !strings.HasPrefix(got, lembasTitle) {
		t.Errorf("the document's title is %q, want it to start with %q", got, lembasTitle)
	}
	if row := eval[string](t, tb, fmt.Sprintf(`(() => { const r = document.getElementById("chat-row-%s"); return r ? r.textContent.trim() : "(no row)" })()`, chatID)); row != lembasTitle {
		t.Errorf("the chat's row in the sidebar says %q, want %q", row, lembasTitle)
	}
	if n := len(titleRequests(rig.fake)); n != 1 {
		t.Errorf("the fake was asked for a title %d times, want once", n)
	}

	// Stored as shown; and a fresh page shows the same, collapsed.
	m := rig.stored(t, id)
	if m.Status != chat.StatusDone || m.Content != lembasAnswer || m.Reasoning != lembasReasoning {
		t.Errorf("stored reply: status %q, content %d bytes (want %d), reasoning %d bytes (want %d)",
			m.Status, len(m.Content), len(lembasAnswer), len(m.Reasoning), len(lembasReasoning))
	}
	tb.assertClean(t)
	tb.reload(t)
	checkFinishedLembas(t, tb, id)
	if eval[bool](t, tb, `document.querySelector(".msg-reasoning details").open`) {
		t.Error("after a reload the reasoning is open, want it collapsed")
	}
	if again := eval[string](t, tb, `document.querySelector("#reasoning-`+id+` summary").textContent.trim()`); again != label {
		t.Errorf("after a reload the reasoning is labelled %q; live it said %q", again, label)
	}
	if got := tb.heading(t); got != lembasTitle {
		t.Errorf("after a reload the heading says %q, want %q", got, lembasTitle)
	}
	tb.assertClean(t)
}

// checkThoughtFor checks that a reasoning label states how long the
// model thought, as the page saw it, to the second.
func checkThoughtFor(t *testing.T, label string, seen time.Duration) {
	t.Helper()
	var n int
	switch {
	case label == "Thought for a moment":
		n = 0
	case label == "Thought for 1 second":
		n = 1
	default:
		if _, err := fmt.Sscanf(label, "Thought for %d seconds", &n); err != nil {
			t.Errorf("the reasoning is labelled %q, want \"Thought for N seconds\"", label)
			return
		}
	}
	if d := time.Duration(n)*time.Second - seen; d < -1500*time.Millisecond || d > 1500*time.Millisecond {
		t.Errorf("the reasoning is labelled %q; the page showed it being written for %.1f s", label, seen.Seconds())
	}
}

// checkFinishedLembas checks what the finished lembas reply shows.
func checkFinishedLembas(t *testing.T, tb *tab, id string) {
	t.Helper()
	type finished struct {
		Items      []string `json:"items"`
		Tokens     int      `json:"tokens"` // highlighted token spans in the code
		Code       string   `json:"code"`
		Copy       []string `json:"copy"` // the code block's buttons
		Chips      []string `json:"chips"`
		Thought    bool     `json:"thought"`
		Label      string   `json:"label"`
		Text       string   `json:"text"`
		Regenerate bool     `json:"regenerate"`
	}
	f := eval[finished](t, tb, fmt.Sprintf(`(() => {
		const id = %q, m = document.getElementById("m-" + id), b = document.getElementById("body-" + id);
		const code = b.querySelector(".code-block pre code");
		const d = document.querySelector("#reasoning-" + id + " details");
		return {
			items: [...b.querySelectorAll("ul > li")].map(li => li.textContent.trim()),
			tokens: code ? code.querySelectorAll("span[class^='c-']").length : 0,
			code: code ? code.textContent : "",
			copy: [...b.querySelectorAll(".code-block button")].map(x => x.textContent.trim()),
			chips: [...document.querySelectorAll("#metrics-" + id + " .chip")].map(c => c.textContent.replace(/\s+/g, " ").trim()),
			thought: !!d,
			label: d ? d.querySelector("summary").textContent.trim() : "",
			text: b.innerText,
			regenerate: !!m.querySelector("[data-action=regenerate]"),
		};
	})()`, id))
	if len(f.Items) != 3 || !strings.HasPrefix(f.Items[0], "One small bite") {
		t.Errorf("the answer's list has items %q, want the three of the reply", f.Items)
	}
	if !strings.Contains(f.Code, `fmt.Println("one small bite, day", day)`) {
		t.Errorf("the code block holds %q", f.Code)
	}
	if f.Tokens < 5 {
		t.Errorf("the code block has %d highlighted token spans: it is not highlighted", f.Tokens)
	}
	if !slices.Equal(f.Copy, []string{"Copy"}) {
		t.Errorf("the code block's buttons are %q, want one Copy", f.Copy)
	}
	if len(f.Chips) != 2 || !strings.Contains(f.Chips[0], " in · ") || !strings.Contains(f.Chips[0], " out") {
		t.Errorf("the reply's metrics chips are %q, want what it cost and what the conversation occupies", f.Chips)
	}
	if !f.Thought || !strings.HasPrefix(f.Label, "Thought for ") {
		t.Errorf("the reasoning is shown: %v, labelled %q; want a <details> labelled \"Thought for …\"", f.Thought, f.Label)
	}
	if !strings.Contains(f.Text, "Sam kept the last of it") || strings.Contains(f.Text, "**") || strings.Contains(f.Text, "```") {
		t.Errorf("the answer shows %q, want the whole reply rendered", f.Text)
	}
	if !f.Regenerate {
		t.Error("the finished last reply offers no Regenerate")
	}
}

// TestTitleArrivesWhenNamedAtOnce names a chat as fast as a small local
// model does, before the stream's next frame is due: the heading must
// still change, without a reload.
func TestTitleArrivesWhenNamedAtOnce(t *testing.T) {
	rig := newChatRig(t)
	tb := rig.tb
	rig.fake.Script(chatModel,
		llmtest.Reply{Content: "Po-tay-toes. Boil 'em, mash 'em, stick 'em in a stew.", TokensPerSecond: 100, Delay: promptDelay},
		llmtest.Reply{Content: "Taters"},
	)
	chatID := rig.startChat(t, tb, "What's taters, precious?")
	tb.waitFinished(t, tb.lastReplyID(t), 10*time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := rig.s.app.Chats.ChatByID(t.Context(), chatID)
		if err != nil {
			t.Fatal(err)
		}
		if c.Title == "Taters" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the chat was not named: its title is %q", c.Title)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !tb.poll(3*time.Second, `document.querySelector("[data-title-input]").value === "Taters"`) {
		t.Errorf("the chat is named %q, but the heading still says %q three seconds later: the title never reached the page",
			"Taters", tb.heading(t))
	}
	tb.assertClean(t)
}
