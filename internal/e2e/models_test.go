package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"lembas/internal/llm/llmtest"
)

// TestAdministratorSetsUpModelsForAGroup follows an administrator through
// the browser: adds a connection, tests it, lists its models, switches one
// off and on, orders them with the buttons and by dragging, makes a group
// and keeps one model to it. Then a member of the group and somebody who
// is not open the model picker: each sees what they may use, in the
// administrator's order.
func TestAdministratorSetsUpModelsForAGroup(t *testing.T) {
	ctx := context.Background()
	s := startSite(t)
	fake := llmtest.NewServer(t)
	fake.SetModels(llmtest.ShapeOpenAI,
		llmtest.ModelSpec{ID: "gandalf-grey"},
		llmtest.ModelSpec{ID: "radagast-brown"},
		llmtest.ModelSpec{ID: "saruman-white"},
	)
	admin := s.openTab(t)
	admin.registerFirstAccount(t)

	// Two more people, made as the administrator would on /admin/users.
	const password = "second-breakfast"
	member, err := s.app.Auth.CreateUser(ctx, "samwise", password, false)
	if err != nil {
		t.Fatal(err)
	}
	outsider, err := s.app.Auth.CreateUser(ctx, "pippin", password, false)
	if err != nil {
		t.Fatal(err)
	}

	// Add the connection: the app lists its models at once.
	admin.clickAndLoad(t, `#sidebar a[href="/admin/general"]`)
	if status := admin.clickAndLoad(t, `nav a[href="/admin/connections"]`); status != 200 {
		t.Fatalf("/admin/connections: status %d", status)
	}
	admin.fill(t, "name", "Istari")
	admin.fill(t, "base_url", fake.URL)
	if status := admin.clickFoundAndLoad(t, `the "Add connection" button`, buttonNamed("Add connection")); status != 200 {
		t.Fatalf("adding the connection ended on status %d", status)
	}
	connPath, _, _ := strings.Cut(admin.location(t), "?")
	if !strings.HasPrefix(connPath, "/admin/connections/") || connPath == "/admin/connections/" {
		t.Fatalf("adding the connection ended on %s, want its own page; the page says:\n%s", admin.location(t), admin.text(t))
	}
	if text := admin.text(t); !strings.Contains(text, "3 new") {
		t.Errorf("the connection's page does not say its models were listed (3 new); it says:\n%s", text)
	}
	admin.assertClean(t)

	// Test swaps the status line in place. Adding the connection listed
	// its models, so the line already says it is answering: the swap shows
	// as a new element replacing the marked one, with no page load.
	asked := len(fake.Requests())
	markStatus := `(() => { document.querySelector("#connection-status > *").dataset.e2eOld = "1"; window.e2eSamePage = true; return true })()`
	swapped := `(() => { const p = document.querySelector("#connection-status > *"); return !!p && !p.dataset.e2eOld })()`
	statusText := `document.querySelector("#connection-status").innerText.trim()`
	eval[bool](t, admin, markStatus)
	admin.click(t, "#test-connection")
	answer := admin.waitForAnswer(t, "POST", connPath+"/test", 10*time.Second)
	if answer.status != 200 || answer.kind == network.ResourceTypeDocument {
		t.Fatalf("Test: status %d %s, as a %s request; want 200 to an htmx request", answer.status, answer.failure, answer.kind)
	}
	if !admin.poll(5*time.Second, swapped) {
		t.Fatalf("Test did not swap #connection-status; it says %q", eval[string](t, admin, statusText))
	}
	if got := eval[string](t, admin, statusText); !strings.HasPrefix(got, "Answering.") {
		t.Errorf("after Test the status says %q, want that it is answering", got)
	}
	if !eval[bool](t, admin, `window.e2eSamePage === true`) || admin.location(t) == connPath+"/test" {
		t.Error("Test loaded a page instead of swapping the status line")
	}
	if len(fake.Requests()) == asked {
		t.Error("Test did not ask the server for its models")
	}

	// List models reports what changed, in place too.
	asked = len(fake.Requests())
	eval[bool](t, admin, markStatus)
	admin.click(t, "#discover-models")
	answer = admin.waitForAnswer(t, "POST", connPath+"/discover", 10*time.Second)
	if answer.status != 200 || answer.kind == network.ResourceTypeDocument {
		t.Fatalf("List models: status %d %s, as a %s request; want 200 to an htmx request", answer.status, answer.failure, answer.kind)
	}
	if !admin.poll(5*time.Second, swapped) {
		t.Fatalf("List models did not swap #connection-status; it says %q", eval[string](t, admin, statusText))
	}
	if got := eval[string](t, admin, statusText); !strings.Contains(got, "Models listed: 0 new, 0 updated, 0 no longer offered.") {
		t.Errorf("after List models the status says %q, want the counts", got)
	}
	if !eval[bool](t, admin, `window.e2eSamePage === true`) {
		t.Error("List models loaded a page instead of swapping the status line")
	}
	if len(fake.Requests()) == asked {
		t.Error("List models did not ask the server for its models")
	}
	admin.assertClean(t)

	// The model list, in the order the server listed them.
	if status := admin.clickAndLoad(t, `nav a[href="/admin/models"]`); status != 200 {
		t.Fatalf("/admin/models: status %d", status)
	}
	rowOrder := func() []string {
		t.Helper()
		return eval[[]string](t, admin, `[...document.querySelectorAll("[data-reorder] [data-id]")].map(r => r.dataset.id)`)
	}
	names := eval[map[string]string](t, admin, `Object.fromEntries([...document.querySelectorAll("[data-reorder] [data-id]")]
		.map(r => [r.dataset.id, r.querySelector(".list-title").textContent.trim()]))`)
	initial := rowOrder()
	named := func(ids []string) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = names[id]
		}
		return out
	}
	if got, want := named(initial), []string{"gandalf-grey", "radagast-brown", "saruman-white"}; !slices.Equal(got, want) {
		t.Fatalf("/admin/models lists %q, want %q", got, want)
	}
	gandalf, radagast, saruman := initial[0], initial[1], initial[2]

	// Switch one off and on again with its row's button.
	row := func(id string) string { return fmt.Sprintf(`li[data-id=%q]`, id) }
	badges := func(id string) []string {
		t.Helper()
		return eval[[]string](t, admin, fmt.Sprintf(`[...document.querySelectorAll(%q)].map(b => b.textContent.trim())`, row(id)+" .badge"))
	}
	switchSays := func(id string) string {
		t.Helper()
		return eval[string](t, admin, fmt.Sprintf(`document.querySelector(%q).textContent.trim()`, row(id)+` form[action$="/enabled"] button`))
	}
	toggle := row(radagast) + ` form[action$="/enabled"] button`
	if got := switchSays(radagast); got != "Switch off" {
		t.Fatalf("the row's switch says %q, want Switch off", got)
	}
	admin.clickAndLoad(t, toggle)
	if m, err := s.app.Catalog.GetModel(ctx, radagast); err != nil || m.Enabled {
		t.Fatalf("after Switch off the model is enabled=%v (%v)", m.Enabled, err)
	}
	if got, say := badges(radagast), switchSays(radagast); !slices.Contains(got, "Off") || say != "Switch on" {
		t.Errorf("after Switch off the row has the badges %q and a button %q, want an Off badge and Switch on", got, say)
	}
	admin.clickAndLoad(t, toggle)
	if m, err := s.app.Catalog.GetModel(ctx, radagast); err != nil || !m.Enabled {
		t.Fatalf("after Switch on the model is enabled=%v (%v)", m.Enabled, err)
	}
	if got, say := badges(radagast), switchSays(radagast); slices.Contains(got, "Off") || say != "Switch off" {
		t.Errorf("after Switch on the row has the badges %q and a button %q, want no Off badge and Switch off", got, say)
	}
	if got := admin.location(t); got != "/admin/models" {
		t.Errorf("the row actions returned to %s, want /admin/models", got)
	}

	// Move the third model to the top with its up button, twice.
	up := fmt.Sprintf(`button[aria-label="Move %s up"]`, names[saruman])
	admin.clickAndLoad(t, up)
	if got, want := rowOrder(), []string{gandalf, saruman, radagast}; !slices.Equal(got, want) {
		t.Fatalf("after one Move up the order is %q, want %q", named(got), named(want))
	}
	admin.clickAndLoad(t, up)
	if got, want := rowOrder(), []string{saruman, gandalf, radagast}; !slices.Equal(got, want) {
		t.Fatalf("after two Move ups the order is %q, want %q", named(got), named(want))
	}
	admin.assertClean(t)

	// Drag the second row above the first, with the mouse.
	dragSecondAboveFirst(t, admin)
	reordered := admin.waitForAnswer(t, "POST", "/admin/models/reorder", 10*time.Second)
	if reordered.status != 204 {
		t.Fatalf("saving the dragged order: status %d %s", reordered.status, reordered.failure)
	}
	want := []string{gandalf, saruman, radagast}
	if got := rowOrder(); !slices.Equal(got, want) {
		t.Errorf("after the drag the page shows %q, want %q", named(got), named(want))
	}
	admin.reload(t)
	if got := rowOrder(); !slices.Equal(got, want) {
		t.Fatalf("after the drag and a reload the order is %q, want %q", named(got), named(want))
	}
	admin.assertClean(t)

	// A group with one member.
	admin.clickAndLoad(t, `nav a[href="/admin/groups"]`)
	admin.fill(t, "name", "Wizards")
	admin.fill(t, "description", "Keepers of the grey, brown and white")
	admin.clickFoundAndLoad(t, `the "Create group" button`, buttonNamed("Create group"))
	groupPath, _, _ := strings.Cut(admin.location(t), "?")
	if !strings.HasPrefix(groupPath, "/admin/groups/") || groupPath == "/admin/groups/" {
		t.Fatalf("creating the group ended on %s; the page says:\n%s", admin.location(t), admin.text(t))
	}
	admin.fill(t, "username", member.Username)
	admin.clickFoundAndLoad(t, `the "Add member" button`, buttonNamed("Add member"))
	listed := eval[[]string](t, admin, `[...document.querySelectorAll("#members-h ~ ul .list-title")].map(a => a.textContent.trim())`)
	if !slices.Equal(listed, []string{member.Username}) {
		t.Fatalf("the group lists the members %q, want %q; the page says:\n%s", listed, member.Username, admin.text(t))
	}
	admin.assertClean(t)

	// Keep the model now in the middle to the group.
	restricted := want[1]
	admin.clickAndLoad(t, `nav a[href="/admin/models"]`)
	admin.clickAndLoad(t, row(restricted)+` a.list-title`)
	if got := admin.location(t); got != "/admin/models/"+restricted+"/edit" {
		t.Fatalf("the model's name led to %s", got)
	}
	groupBox := `[...document.querySelectorAll("form[action$='/groups'] label")].find(l => l.textContent.trim() === "Wizards").querySelector("input[type=checkbox]")`
	admin.clickFound(t, "the Wizards box", groupBox)
	if !eval[bool](t, admin, groupBox+`.checked`) {
		t.Fatal("clicking the Wizards box did not tick it")
	}
	admin.clickFoundAndLoad(t, `the "Save access" button`, buttonNamed("Save access"))
	if got := admin.location(t); got != "/admin/models/"+restricted+"/edit?done=saved" {
		t.Errorf("saving access ended on %s", got)
	}
	if !eval[bool](t, admin, groupBox+`.checked`) {
		t.Error("after saving, the Wizards box is not ticked")
	}
	if m, err := s.app.Catalog.GetModel(ctx, restricted); err != nil || !m.Restricted {
		t.Fatalf("the model is not restricted after saving (%v)", err)
	}
	admin.clickAndLoad(t, `nav a[href="/admin/models"]`)
	if got := badges(restricted); !slices.Contains(got, "Some groups") {
		t.Errorf("the restricted model's row has the badges %q, want Some groups", got)
	}
	order := rowOrder()
	if !slices.Equal(order, want) {
		t.Fatalf("/admin/models now lists %q, want %q", named(order), named(want))
	}
	admin.assertClean(t)

	// Each person's picker, in the administrator's order.
	others := slices.DeleteFunc(slices.Clone(order), func(id string) bool { return id == restricted })
	for _, who := range []struct {
		name string
		want []string
	}{
		{member.Username, order},
		{outsider.Username, others},
	} {
		tb := s.openTab(t)
		tb.signInAs(t, who.name, password)
		if status := tb.clickAndLoad(t, `#sidebar a[href="/settings"]`); status != 200 {
			t.Fatalf("%s: /settings: status %d", who.name, status)
		}
		tb.click(t, "[data-picker-button]")
		if !tb.poll(5*time.Second, `(() => { const l = document.querySelector("[data-picker-list]"); return !l.hidden && l.getBoundingClientRect().height > 0 })()`) {
			t.Fatalf("%s: clicking the picker did not show its list", who.name)
		}
		if got := eval[[]string](t, tb, pickerOptionIDs); !slices.Equal(got, pickerIDs(who.want)) {
			t.Errorf("%s's picker offers %q, want %q (%q)", who.name, got, pickerIDs(who.want), named(who.want))
		}
		tb.assertClean(t)
	}
}

// dragSecondAboveFirst drags the second row of the model list above the
// first with the mouse: real HTML5 drag and drop, which chromedp drives
// through Input.setInterceptDrags and Input.dispatchDragEvent. The page
// must see a trusted dragstart and dragend, and accept the drop.
func dragSecondAboveFirst(t *testing.T, tb *tab) {
	t.Helper()
	type point struct {
		X float64 `json:"x"`
		Y float64 `json:"y"`
	}
	type drag struct {
		From point `json:"from"`
		To   point `json:"to"`
	}
	// Press on the second row's picture, which is neither a link nor a
	// control, and let go in the top quarter of the first row.
	d := eval[drag](t, tb, `(() => {
		const list = document.querySelector("[data-reorder]");
		window.e2eDrag = [];
		for (const type of ["dragstart", "drop", "dragend"]) {
			list.addEventListener(type, e => window.e2eDrag.push(
				{type, trusted: e.isTrusted, effect: e.dataTransfer.dropEffect}), true);
		}
		const rows = list.querySelectorAll("[data-id]");
		rows[0].scrollIntoView({block: "center"});
		const pic = rows[1].querySelector(".model-avatar").getBoundingClientRect();
		const first = rows[0].getBoundingClientRect();
		const x = pic.left + pic.width / 2;
		return {from: {x, y: pic.top + pic.height / 2}, to: {x, y: first.top + first.height / 4}};
	})()`)
	if err := chromedp.Do(tb.ctx, chromedp.DragAndDropXY(d.From.X, d.From.Y, d.To.X, d.To.Y)); err != nil {
		t.Fatalf("drag from %v to %v: %v", d.From, d.To, err)
	}
	type event struct {
		Type    string `json:"type"`
		Trusted bool   `json:"trusted"`
		Effect  string `json:"effect"`
	}
	if !tb.poll(5*time.Second, `window.e2eDrag.some(e => e.type === "dragend")`) {
		t.Fatalf("the drag never ended; the page saw %+v", eval[[]event](t, tb, `window.e2eDrag`))
	}
	seen := map[string]event{}
	for _, e := range eval[[]event](t, tb, `window.e2eDrag`) {
		seen[e.Type] = e
	}
	if !seen["dragstart"].Trusted || !seen["dragend"].Trusted {
		t.Fatalf("no real drag: the page saw %+v", seen)
	}
	// The dragged row moves under the pointer, so the drop lands on the
	// row itself; the list must accept it there too.
	if _, dropped := seen["drop"]; !dropped || seen["dragend"].Effect != "move" {
		t.Errorf("the list refused the drop (drop event seen: %v, dragend dropEffect %q, want a drop and \"move\"): "+
			"the browser shows the drag as cancelled. admin.js's dragover handler returns before preventDefault() "+
			"while the pointer is over the dragged row, which is where that row lands once it has moved", dropped, seen["dragend"].Effect)
	}
}
