package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp/kb"

	"lembas/internal/llm/llmtest"
)

// TestModelPickerKeyboard works the model picker on /settings from the
// keyboard alone, as a listbox should work: Tab to it, arrows to open and
// move, Escape to close, End and Enter to choose, letters to jump; a click
// elsewhere closes it. The choice is saved with the preferences form,
// reached and sent with the keyboard too.
func TestModelPickerKeyboard(t *testing.T) {
	s := startSite(t)
	tb := s.openTab(t)
	user := tb.registerFirstAccount(t)
	fake := llmtest.NewServer(t)
	fake.SetModels(llmtest.ShapeOpenAI,
		llmtest.ModelSpec{ID: "gandalf-grey"},
		llmtest.ModelSpec{ID: "radagast-brown"},
		llmtest.ModelSpec{ID: "saruman-white"},
	)
	_, models := addConnection(t, s, "Istari", fake)
	if len(models) != 3 {
		t.Fatalf("%d models listed, want 3", len(models))
	}
	first, middle, last := models[0], models[1], models[2]

	if status := tb.open(t, "/settings"); status != 200 {
		t.Fatalf("/settings: status %d", status)
	}

	const (
		button   = `document.querySelector("[data-picker-button]")`
		list     = `document.querySelector("[data-picker-list]")`
		value    = `document.querySelector("[data-picker-value]").value`
		isOpen   = `(() => { const l = ` + list + `; return !l.hidden && l.getBoundingClientRect().height > 0 })()`
		isClosed = `(() => { const l = ` + list + `; return l.hidden && l.getBoundingClientRect().height === 0 })()`
	)
	// state is what the picker shows and where the focus is.
	type state struct {
		Open     bool   `json:"open"`
		Expanded string `json:"expanded"` // the button's aria-expanded
		Focus    string `json:"focus"`    // "button", "list" or what else has it
		Active   string `json:"active"`   // the id of the .is-active option
		Pointer  string `json:"pointer"`  // the list's aria-activedescendant
		Value    string `json:"value"`    // the hidden input
		Label    string `json:"label"`    // the button's aria-label
		Face     string `json:"face"`     // the model's name on the button
	}
	read := func() state {
		t.Helper()
		return eval[state](t, tb, `(() => {
			const b = `+button+`, l = `+list+`, a = document.activeElement;
			const active = l.querySelector(".is-active");
			return {
				open: !l.hidden && l.getBoundingClientRect().height > 0,
				expanded: b.getAttribute("aria-expanded") || "",
				focus: a === b ? "button" : a === l ? "list" : a.tagName.toLowerCase() + (a.name ? "[name=" + a.name + "]" : ""),
				active: active ? active.id : "",
				pointer: l.getAttribute("aria-activedescendant") || "",
				value: `+value+`,
				label: b.getAttribute("aria-label") || "",
				face: b.querySelector("[data-picker-face] .picker-name").textContent.trim(),
			};
		})()`)
	}
	optionID := func(modelID string) string { return "default_model-" + modelID }
	const noneID = "default_model-none"
	expect := func(step string, want func(st state) string) {
		t.Helper()
		st := read()
		if problem := want(st); problem != "" {
			t.Fatalf("%s: %s; the picker is %+v", step, problem, st)
		}
	}
	openWithActive := func(active string) func(st state) string {
		return func(st state) string {
			switch {
			case !st.Open || st.Expanded != "true":
				return "the list is not open"
			case st.Focus != "list":
				return "the focus is not on the list"
			case st.Active != active:
				return fmt.Sprintf("the active option is %q, want %q", st.Active, active)
			case st.Pointer != active:
				return fmt.Sprintf("aria-activedescendant is %q, want %q", st.Pointer, active)
			}
			return ""
		}
	}
	closedOnButton := func(st state) string {
		switch {
		case st.Open || st.Expanded != "false":
			return "the list is still open"
		case st.Focus != "button":
			return "the focus did not return to the button"
		case st.Pointer != "":
			return "the closed list keeps an aria-activedescendant"
		}
		return ""
	}

	// Tab from the field before reaches the picker's button.
	eval[bool](t, tb, `(document.querySelector("input[name=timezone]").focus(), true)`)
	tb.press(t, kb.Tab)
	expect("Tab from the time zone", func(st state) string {
		if st.Focus != "button" {
			return "the focus is not on the picker's button"
		}
		if st.Open {
			return "the list opened by itself"
		}
		return ""
	})

	// ArrowDown opens it on the current choice, the instance default.
	tb.press(t, kb.ArrowDown)
	expect("ArrowDown on the button", openWithActive(noneID))
	tb.press(t, kb.ArrowDown)
	expect("ArrowDown in the list", openWithActive(optionID(first.ID)))
	tb.press(t, kb.ArrowDown)
	expect("a second ArrowDown", openWithActive(optionID(middle.ID)))
	tb.press(t, kb.ArrowUp)
	expect("ArrowUp", openWithActive(optionID(first.ID)))

	// Escape closes it, chooses nothing and gives the focus back.
	tb.press(t, kb.Escape)
	expect("Escape", closedOnButton)
	if st := read(); st.Value != "" {
		t.Fatalf("Escape chose %q", st.Value)
	}

	// End and Enter choose the last model.
	tb.press(t, kb.ArrowDown)
	expect("ArrowDown to open again", openWithActive(noneID))
	tb.press(t, kb.End)
	expect("End", openWithActive(optionID(last.ID)))
	tb.press(t, kb.Home)
	expect("Home", openWithActive(noneID))
	tb.press(t, kb.End)
	tb.press(t, kb.Enter)
	expect("Enter", closedOnButton)
	expect("Enter", func(st state) string {
		switch {
		case st.Value != last.ID:
			return fmt.Sprintf("the hidden input holds %q, want the last model's id %q", st.Value, last.ID)
		case st.Face != last.Name():
			return fmt.Sprintf("the button shows %q, want %q", st.Face, last.Name())
		case st.Label != "Model: "+last.Name():
			return fmt.Sprintf("the button is labelled %q, want %q", st.Label, "Model: "+last.Name())
		}
		return ""
	})

	// ArrowUp opens it too, on the current choice; typed letters jump.
	tb.press(t, kb.ArrowUp)
	expect("ArrowUp to open again", openWithActive(optionID(last.ID)))
	tb.press(t, "ra")
	expect(`typing "ra"`, openWithActive(optionID(middle.ID)))
	time.Sleep(800 * time.Millisecond) // the picker forgets typed letters after 700 ms
	tb.press(t, "g")
	expect(`typing "g" a moment later`, openWithActive(optionID(first.ID)))

	// A click elsewhere closes it and chooses nothing.
	tb.click(t, "#prefs-h")
	if !tb.poll(2*time.Second, isClosed) {
		t.Fatalf("a click outside left the list open; the picker is %+v", read())
	}
	if st := read(); st.Value != last.ID || st.Expanded != "false" {
		t.Fatalf("after a click outside the picker is %+v, want it closed holding %q", st, last.ID)
	}

	// Space chooses as Enter does, from the keyboard again.
	eval[bool](t, tb, `(`+button+`.focus(), true)`)
	tb.press(t, kb.ArrowDown)
	if !tb.poll(2*time.Second, isOpen) {
		t.Fatal("ArrowDown did not open the list again")
	}
	tb.press(t, kb.ArrowUp)
	expect("ArrowUp in the list", openWithActive(optionID(middle.ID)))
	tb.press(t, " ")
	expect("Space", closedOnButton)
	if st := read(); st.Value != middle.ID || st.Face != middle.Name() {
		t.Fatalf("Space chose %q showing %q, want %q", st.Value, st.Face, middle.ID)
	}
	tb.press(t, kb.ArrowDown)
	tb.press(t, kb.End)
	tb.press(t, kb.Enter)
	expect("End and Enter once more", closedOnButton)

	// Tab goes on to Save preferences, and Enter sends the form.
	tb.press(t, kb.Tab)
	if got := eval[string](t, tb, `document.activeElement.textContent.trim()`); got != "Save preferences" {
		t.Fatalf("Tab from the picker reached %q, want the Save preferences button", got)
	}
	if status := tb.pressAndLoad(t, kb.Enter); status != 200 {
		t.Fatalf("saving the preferences ended on status %d", status)
	}
	if got := tb.location(t); got != "/settings?done=saved" {
		t.Errorf("saving the preferences ended on %s, want /settings?done=saved", got)
	}
	u, err := s.app.Auth.UserByID(context.Background(), user.ID)
	if err != nil {
		t.Fatal(err)
	}
	if u.DefaultModelID != last.ID {
		t.Fatalf("the stored default model is %q, want %q", u.DefaultModelID, last.ID)
	}

	// Shown after a reload: on the button and as the selected option.
	tb.reload(t)
	if st := read(); st.Value != last.ID || st.Face != last.Name() || st.Label != "Model: "+last.Name() || st.Open {
		t.Errorf("after a reload the picker is %+v, want it closed showing %s", st, last.Name())
	}
	selected := eval[[]string](t, tb, `[...document.querySelectorAll("[data-picker-list] [aria-selected=true]")].map(o => o.id)`)
	if strings.Join(selected, ",") != optionID(last.ID) {
		t.Errorf("after a reload the selected options are %q, want only %q", selected, optionID(last.ID))
	}
	tb.assertClean(t)
}
