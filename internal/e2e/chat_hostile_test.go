package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"lembas/internal/llm/llmtest"
)

// hostileAnswer is a reply written to do harm: scripts, handlers, a
// javascript: link, an htmx attribute that would load an admin page, an
// image and a frame. Each sets window.__pwned to its own number.
const hostileAnswer = "Here is everything you asked for.\n\n" +
	"<script>window.__pwned=1</script>\n\n" +
	"<img src=x onerror=\"window.__pwned=2\">\n\n" +
	"[click](javascript:window.__pwned=3)\n\n" +
	"<svg onload=\"window.__pwned=4\">\n\n" +
	"<details open ontoggle=\"window.__pwned=5\">x</details>\n\n" +
	"<a href=\"#\" hx-get=\"/admin/general\" hx-trigger=\"load\">load me</a>\n\n" +
	"![x](/favicon.ico)\n\n" +
	"<iframe src=\"/\"></iframe>\n\n" +
	"A [real link](https://example.org/lembas) and ![a picture](https://example.org/lembas.png).\n\n" +
	"That is all."

// hostileReasoning does the same in the reasoning.
const hostileReasoning = "Let me think <img src=x onerror=\"window.__pwned=6\"> about " +
	"<script>window.__pwned=7</script> this [carefully](javascript:window.__pwned=8)."

// hostileTitle is the title the model gives: markup too. (Titles lose
// Markdown's "__", so this one sets window.pwned.)
const hostileTitle = "<img src=x onerror=\"window.pwned=9\">"

// harmless checks a reply's bubble and everything around it for what the
// hostile reply tried, and returns what it found.
func harmless(t *testing.T, tb *tab, id string) []string {
	t.Helper()
	return eval[[]string](t, tb, fmt.Sprintf(`(() => {
		const id = %q, found = [];
		if (window.__pwned !== undefined) found.push("window.__pwned is " + window.__pwned);
		if (window.pwned !== undefined) found.push("window.pwned is " + window.pwned);
		const regions = ["body-" + id, "reasoning-" + id].map(x => document.getElementById(x)).filter(Boolean);
		for (const r of regions) {
			for (const el of r.querySelectorAll("img, script, iframe, svg, object, embed, style, form, input, video, audio"))
				found.push("a <" + el.tagName.toLowerCase() + "> in #" + r.id);
			for (const el of r.querySelectorAll("*")) {
				for (const a of el.attributes) {
					if (/^on/i.test(a.name) || /^(hx|data-hx)-/i.test(a.name) || a.name === "style")
						found.push(el.tagName.toLowerCase() + " carries " + a.name + "=" + JSON.stringify(a.value) + " in #" + r.id);
				}
			}
			for (const a of r.querySelectorAll("a")) {
				const href = a.getAttribute("href") || "";
				if (!/^(https?:|mailto:)/i.test(href)) found.push("a link to " + JSON.stringify(href) + " in #" + r.id);
				if (!/\bnoopener\b/.test(a.rel || "")) found.push("a link without noopener (rel=" + JSON.stringify(a.rel) + ") in #" + r.id);
			}
			for (const d of r.querySelectorAll("details[open]")) found.push("an open <details> the reply wrote in #" + r.id);
		}
		if (!regions.length) found.push("no bubble for " + id);
		return found;
	})()`, id))
}

// TestHostileReplySetsOffNothing streams a reply, reasoning and title
// made of markup meant to run script, load things or act on the person's
// behalf. Nothing runs, at any point while it streams, when it finishes
// or after a reload; the bubble holds no image, script or frame, every
// link in it is an ordinary one with noopener, and the page asks for
// nothing the reply named. The browser reports nothing either: the
// sanitiser removes all of it before the CSP would have to refuse it.
func TestHostileReplySetsOffNothing(t *testing.T) {
	rig := newChatRig(t)
	tb := rig.tb
	rig.fake.Script(chatModel,
		llmtest.Reply{Reasoning: hostileReasoning, Content: hostileAnswer, TokensPerSecond: 80},
		llmtest.Reply{Content: hostileTitle, Delay: titleDelay},
	)

	chatID := rig.startChat(t, tb, "Show me what you can do.")
	id := tb.lastReplyID(t)
	mark := tb.rec.sentCount()

	checks := 0
	for {
		streaming := eval[bool](t, tb, fmt.Sprintf(`document.getElementById("m-%s").hasAttribute("data-stream")`, id))
		if found := harmless(t, tb, id); len(found) > 0 {
			t.Fatalf("while the reply streamed (check %d): %s", checks+1, strings.Join(found, "; "))
		}
		checks++
		if !streaming {
			break
		}
		if checks > 1000 {
			t.Fatal("the reply did not finish")
		}
		time.Sleep(25 * time.Millisecond)
	}
	if checks < 5 {
		t.Errorf("only %d checks while the reply streamed; want several", checks)
	}
	tb.waitTitle(t, hostileTitle, 10*time.Second)
	if found := harmless(t, tb, id); len(found) > 0 {
		t.Errorf("after the reply finished: %s", strings.Join(found, "; "))
	}
	checkHostileShown(t, tb, id, chatID)

	// The page asked for nothing but the reply's own stream meanwhile.
	stream := "/api/chats/" + chatID + "/messages/" + id + "/stream"
	for _, r := range tb.rec.since(mark) {
		if p := urlPath(r.url); !strings.HasPrefix(p, "/static/") && p != stream {
			t.Errorf("while showing the reply the page requested %s %s (%s)", r.method, r.url, r.kind)
		}
	}
	tb.assertClean(t)

	// Again from the stored reply.
	tb.reload(t)
	mark = tb.rec.sentCount()
	if found := harmless(t, tb, id); len(found) > 0 {
		t.Errorf("after a reload: %s", strings.Join(found, "; "))
	}
	checkHostileShown(t, tb, id, chatID)
	// Give anything the markup might load a moment to be asked for.
	if tb.poll(300*time.Millisecond, `window.__pwned !== undefined || window.pwned !== undefined`) {
		t.Errorf("after a reload window.__pwned became %v and window.pwned %v", eval[any](t, tb, `window.__pwned`), eval[any](t, tb, `window.pwned`))
	}
	for _, r := range tb.rec.since(mark) {
		// The page's own assets (the browser fetches the icon late) and
		// the reply's stream are expected; nothing the reply named is.
		if p := urlPath(r.url); !strings.HasPrefix(p, "/static/") && p != stream {
			t.Errorf("after the reloaded page settled it requested %s %s (%s)", r.method, r.url, r.kind)
		}
	}
	if n := tb.rec.count("GET", "/admin/general"); n != 0 {
		t.Errorf("the reply's hx-get reached /admin/general %d time(s)", n)
	}
	tb.assertClean(t)
}

// checkHostileShown checks that the hostile reply is shown as what it is:
// its markup as text, its images as links, its title as text.
func checkHostileShown(t *testing.T, tb *tab, id, chatID string) {
	t.Helper()
	type shown struct {
		Text    string   `json:"text"`
		Links   []string `json:"links"`
		Title   string   `json:"title"`
		Heading string   `json:"heading"`
		Row     string   `json:"row"`
	}
	s := eval[shown](t, tb, fmt.Sprintf(`(() => {
		const b = document.getElementById("body-%s"), row = document.getElementById("chat-row-%s");
		return { text: b.innerText, links: [...b.querySelectorAll("a")].map(a => a.getAttribute("href")),
			title: document.title, heading: document.querySelector("[data-title-input]").value,
			row: row ? row.textContent.trim() : "(no row)" };
	})()`, id, chatID))
	for _, want := range []string{"Here is everything you asked for.", "<script>window.__pwned=1</script>", `<iframe src="/">`, "That is all."} {
		if !strings.Contains(s.Text, want) {
			t.Errorf("the reply does not show %q as text; it shows:\n%s", want, s.Text)
		}
	}
	hasLink := func(href string) bool {
		for _, l := range s.Links {
			if l == href {
				return true
			}
		}
		return false
	}
	if !hasLink("https://example.org/lembas") || !hasLink("https://example.org/lembas.png") {
		t.Errorf("the reply's links are %q, want the real link and the picture as a link", s.Links)
	}
	if s.Heading != hostileTitle || s.Row != hostileTitle || !strings.HasPrefix(s.Title, hostileTitle) {
		t.Errorf("the title shows as %q in the heading, %q in the sidebar and %q as the document's title; want the model's words as text",
			s.Heading, s.Row, s.Title)
	}
}
