package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"lembas/internal/auth"
	"lembas/internal/llm/llmtest"
)

// pageCase is one page to load: where to go, the status it must answer
// and where it must end up.
type pageCase struct {
	path   string
	status int64
	lands  string // location after redirects; "" means path itself
}

// TestEveryPageLoadsClean loads every HTML page in every theme at a phone
// and a desktop width: no console error, CSP violation or failed load, and
// nothing wider than the window.
func TestEveryPageLoadsClean(t *testing.T) {
	s := startSite(t)
	tb := s.openTab(t)
	user := tb.registerFirstAccount(t)
	group, err := s.app.Auth.CreateGroup(context.Background(), "Fellowship", "Nine walkers")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.app.Auth.AddMember(context.Background(), group.ID, user.ID); err != nil {
		t.Fatal(err)
	}

	// A connection with two models, as OpenRouter states them (names,
	// descriptions, prices, capabilities), one with a picture.
	fake := llmtest.NewServer(t)
	fake.SetModels(llmtest.ShapeOpenRouter,
		llmtest.ModelSpec{ID: "mistralai/mistral-small-3.2-24b-instruct", Name: "Mistral Small 3.2 24B",
			Description:   "A 24B model tuned to follow instructions, call functions and read images.",
			ContextLength: 131072, Vision: true, Tools: true, PromptPrice: "0.00000005", CompletionPrice: "0.0000001"},
		llmtest.ModelSpec{ID: "deepseek/deepseek-r1-0528", Name: "DeepSeek R1 0528",
			Description: "Reasons at length before it answers.", ContextLength: 163840, Reasoning: true},
	)
	conn, models := addConnection(t, s, "OpenRouter", fake)
	if len(models) != 2 {
		t.Fatalf("%d models listed, want 2", len(models))
	}
	pictured := models[0]
	if err := s.app.Catalog.SetAvatar(context.Background(), pictured.ID, bytes.NewReader(tinyPNG(t))); err != nil {
		t.Fatal(err)
	}
	chatID := finishedChat(t, s, user, fake, models[1])

	signedIn := []pageCase{
		{path: "/", status: 200},
		{path: "/chat", status: 200},
		{path: "/chat/" + chatID, status: 200},
		{path: "/settings", status: 200},
		{path: "/admin", status: 200, lands: "/admin/general"},
		{path: "/admin/general", status: 200},
		{path: "/admin/users", status: 200},
		{path: "/admin/users/" + user.ID, status: 200},
		{path: "/admin/groups", status: 200},
		{path: "/admin/groups/" + group.ID, status: 200},
		{path: "/admin/connections", status: 200},
		{path: "/admin/connections/" + conn.ID, status: 200},
		{path: "/admin/models", status: 200},
		{path: "/admin/models/" + pictured.ID + "/edit", status: 200},
		{path: "/offline", status: 200},
		{path: "/no-such-page", status: 404},
	}
	signedOut := []pageCase{
		{path: "/auth/login", status: 200},
		{path: "/auth/register", status: 200},
	}
	widths := []int64{375, 1280}

	for i, theme := range auth.Themes {
		if err := s.app.Auth.SetTheme(context.Background(), user.ID, theme); err != nil {
			t.Fatal(err)
		}
		visitAll(t, tb, theme, widths, signedIn)

		// Signing out leaves the theme in a cookie for the signed-out pages.
		tb.resize(t, 1280, 800)
		tb.open(t, "/")
		tb.clickAndLoad(t, "#sign-out")
		visitAll(t, tb, theme, widths, signedOut)
		if i < len(auth.Themes)-1 {
			tb.resize(t, 1280, 800)
			tb.signIn(t)
		}
	}
}

func visitAll(t *testing.T, tb *tab, theme string, widths []int64, pages []pageCase) {
	t.Helper()
	for _, width := range widths {
		tb.resize(t, width, 800)
		for _, p := range pages {
			t.Run(fmt.Sprintf("%s/%d%s", theme, width, p.path), func(t *testing.T) {
				checkPage(t, tb, p, theme, width)
			})
		}
	}
}

func checkPage(t *testing.T, tb *tab, p pageCase, theme string, width int64) {
	if status := tb.open(t, p.path); status != p.status {
		t.Errorf("status %d, want %d", status, p.status)
	}
	lands := p.lands
	if lands == "" {
		lands = p.path
	}
	if got := tb.location(t); got != lands {
		t.Errorf("ended on %s, want %s", got, lands)
	}
	if got := tb.theme(t); got != theme {
		t.Errorf("theme %q, want %q", got, theme)
	}
	type widthReport struct {
		Inner  int64    `json:"inner"`
		Scroll int64    `json:"scroll"`
		Wide   []string `json:"wide"`
	}
	// wide names the elements that stick out past the right edge, so a
	// failure says where to look.
	w := eval[widthReport](t, tb, `(() => {
		const inner = window.innerWidth;
		const wide = [...document.body.querySelectorAll("*")]
			.filter(el => el.getBoundingClientRect().right > inner + 0.5)
			.slice(0, 5)
			.map(el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
				(el.classList.length ? "." + [...el.classList].join(".") : "") +
				" (right edge " + Math.round(el.getBoundingClientRect().right) + ")");
		return {inner, scroll: document.documentElement.scrollWidth, wide};
	})()`)
	if w.Inner != width {
		t.Errorf("window.innerWidth is %d, want %d", w.Inner, width)
	}
	if w.Scroll > w.Inner {
		t.Errorf("scrolls sideways: document %dpx wide in a %dpx window; too wide: %s",
			w.Scroll, w.Inner, strings.Join(w.Wide, ", "))
	}
	tb.assertClean(t)
}
