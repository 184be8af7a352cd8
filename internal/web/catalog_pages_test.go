package web

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"lembas/internal/catalog"
	"lembas/internal/llm/llmtest"
)

func TestConnectionLifecycleNeverShowsTheKey(t *testing.T) {
	site := newSite(t)
	admin, user, _ := site.people()
	const key = "sk-very-secret-0123456789"
	up := llmtest.NewServer(t)
	up.RequireKey(key)
	up.SetModels(llmtest.ShapeOpenRouter, llmtest.ModelSpec{ID: "vendor/seer", ContextLength: 32768, Vision: true},
		llmtest.ModelSpec{ID: "vendor/scribe"})

	// A mistake comes back with the values, but never the key.
	r := admin.post("/admin/connections", url.Values{"name": {"Router"}, "base_url": {"ftp://nope"}, "api_key": {key}})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, `value="Router"`) || strings.Contains(r.body, key) {
		t.Fatalf("bad URL: %d (the key must not come back)", r.StatusCode)
	}
	r = admin.post("/admin/connections", url.Values{"name": {"Router"}, "base_url": {up.URL + "/models"}, "api_key": {key},
		"headers": {"HTTP-Referer: https://lembas.example\nX-Title: LLeMbas"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d %s", r.StatusCode, r.body)
	}
	page := r.Header.Get("Location")
	r = admin.get(page)
	if !strings.Contains(r.body, "2 new") || !strings.Contains(r.body, "Answering") {
		t.Fatalf("a new connection should list its models at once: %s", page)
	}
	sent := up.LastRequest()
	if sent.Header.Get("Authorization") != "Bearer "+key || sent.Header.Get("HTTP-Referer") != "https://lembas.example" {
		t.Fatalf("the key or the extra headers were not sent: %v", sent.Header)
	}

	// Saving with the key field empty keeps the key.
	connID := strings.TrimPrefix(page[:strings.Index(page, "?")], "/admin/connections/")
	r = admin.post("/admin/connections/"+connID, url.Values{"name": {"OpenRouter"}, "base_url": {up.URL},
		"headers": {"HTTP-Referer:\nX-Title:"}, "timeout": {"10"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d %s", r.StatusCode, r.body)
	}
	// Test and discover answer htmx with the status line alone.
	r = admin.post("/admin/connections/"+connID+"/test", nil, "HX-Request", "true")
	if r.StatusCode != 200 || !strings.Contains(r.body, "Answering") || strings.Contains(r.body, "<html") {
		t.Fatalf("test: %d %q", r.StatusCode, r.body)
	}
	if got := up.LastRequest().Header.Get("Authorization"); got != "Bearer "+key {
		t.Fatalf("saving without a key lost the key: %q", got)
	}
	r = admin.post("/admin/connections/"+connID+"/discover", nil, "HX-Request", "true")
	if !strings.Contains(r.body, "0 new, 0 updated") {
		t.Fatalf("discover again: %q", r.body)
	}

	// Render every page an administrator or a member can reach, and the
	// key is in none of them.
	model := site.firstModel(t, connID)
	for _, p := range []string{"/", "/settings", "/admin/general", "/admin/connections", "/admin/connections/" + connID,
		"/admin/models", "/admin/models?connection=" + connID, "/admin/models/" + model + "/edit", "/admin/users", "/admin/groups"} {
		for _, b := range []*browser{admin, user} {
			if r := b.get(p); strings.Contains(r.body, key) || strings.Contains(r.body, key[len(key)-8:]) {
				t.Errorf("%s shows the key", p)
			}
		}
	}
	if r := admin.get("/admin/connections/" + connID); !strings.Contains(r.body, "••••••••6789") {
		t.Error("the connection page does not show the masked key")
	}
	// A wrong key is reported in words.
	up.RequireKey("another")
	r = admin.post("/admin/connections/"+connID+"/test", nil, "HX-Request", "true")
	if !strings.Contains(r.body, "Not answering") || strings.Contains(r.body, "dial tcp") {
		t.Fatalf("wrong key: %q", r.body)
	}
}

// A closed port and a server that accepts and never answers each cost the
// administrator at most the connection's timeout, once; pages read only
// what discovery stored, so they stay instant and never touch the server.
func TestDeadEndpointsCostAtMostTheirTimeout(t *testing.T) {
	site := newSite(t)
	admin := site.browser()
	admin.register("admin")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	r := admin.post("/admin/connections", url.Values{"name": {"Closed"}, "base_url": {closed}, "timeout": {"1"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d", r.StatusCode)
	}
	if r := admin.get(r.Header.Get("Location")); !strings.Contains(r.body, "Could not connect") {
		t.Fatal("a closed port is not reported in words")
	}

	hang := llmtest.NewServer(t)
	hang.SetHang(true)
	start := time.Now()
	r = admin.post("/admin/connections", url.Values{"name": {"Hanging"}, "base_url": {hang.URL}, "timeout": {"1"}})
	if took := time.Since(start); took > 6*time.Second {
		t.Fatalf("adding a hanging server took %v with a 1 s timeout", took)
	}
	page := r.Header.Get("Location")
	if r := admin.get(page); !strings.Contains(r.body, "No answer") && !strings.Contains(r.body, "within") {
		t.Fatalf("a hanging server is not reported: %s", page)
	}
	asked := len(hang.Requests())
	for _, p := range []string{"/admin/connections", page, "/admin/models", "/settings", "/"} {
		if r := admin.get(p); r.StatusCode != 200 {
			t.Errorf("%s: %d", p, r.StatusCode)
		}
	}
	if n := len(hang.Requests()); n != asked {
		t.Fatalf("loading pages contacted the hanging server %d times", n-asked)
	}
}

func TestModelAdministration(t *testing.T) {
	site := newSite(t)
	admin := site.browser()
	admin.register("admin")
	connID, _ := site.fakeConnection(t, "Local",
		llmtest.ModelSpec{ID: "alpha"}, llmtest.ModelSpec{ID: "beta"}, llmtest.ModelSpec{ID: "gamma"})
	ids := site.modelIDs(t)
	if len(ids) != 3 {
		t.Fatalf("%d models", len(ids))
	}
	// Move gamma to the top with two clicks; the list returns to itself.
	admin.post("/admin/models/"+ids[2]+"/move", url.Values{"direction": {"up"}, "back": {"/admin/models?tab=enabled"}})
	r := admin.post("/admin/models/"+ids[2]+"/move", url.Values{"direction": {"up"}, "back": {"/admin/models?tab=enabled"}})
	if r.Header.Get("Location") != "/admin/models?tab=enabled" {
		t.Fatalf("back to %q", r.Header.Get("Location"))
	}
	if got := site.modelIDs(t); got[0] != ids[2] || got[1] != ids[0] {
		t.Fatalf("order after moving gamma up twice: %v", got)
	}
	// Reorder by drag: the posted order is kept.
	admin.post("/admin/models/reorder", url.Values{"id": {ids[1], ids[0], ids[2]}}, "HX-Request", "true")
	if got := site.modelIDs(t); got[0] != ids[1] || got[1] != ids[0] || got[2] != ids[2] {
		t.Fatalf("order after reorder: %v", got)
	}
	// Bulk: switch two off; the Disabled tab lists exactly those.
	admin.post("/admin/models/bulk", url.Values{"action": {"disable"}, "id": {ids[0], ids[1]}})
	r = admin.get("/admin/models?tab=disabled")
	if !strings.Contains(r.body, "/admin/models/"+ids[0]+"/edit") || strings.Contains(r.body, "/admin/models/"+ids[2]+"/edit") {
		t.Fatal("disabled tab")
	}
	// Search.
	if r := admin.get("/admin/models?q=gam"); !strings.Contains(r.body, ">gamma<") || strings.Contains(r.body, ">alpha<") {
		t.Fatal("search")
	}
	// Settings: a bad value comes back beside its field with what was typed.
	r = admin.post("/admin/models/"+ids[2], url.Values{"display_name": {"Gamma Ray"}, "temperature": {"7"}})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, `value="Gamma Ray"`) || !strings.Contains(r.body, `value="7"`) {
		t.Fatalf("bad temperature: %d", r.StatusCode)
	}
	r = admin.post("/admin/models/"+ids[2], url.Values{"display_name": {"Gamma Ray"}, "temperature": {"0.4"}, "effort": {"off"},
		"context_length": {"8192"}, "vision": {"on"}, "system_prompt": {"Be brief."}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d %s", r.StatusCode, r.body)
	}
	m, err := site.catalog.GetModel(t.Context(), ids[2])
	if err != nil || m.DisplayName != "Gamma Ray" || *m.Temperature != 0.4 || m.Effort != "off" || m.ContextLength != 8192 || !m.Caps.Vision || m.SystemPrompt != "Be brief." {
		t.Fatalf("saved model: %+v %v", m, err)
	}
	// Pin and default.
	admin.post("/admin/models/"+ids[2]+"/pin", url.Values{"on": {"true"}})
	admin.post("/admin/models/"+ids[2]+"/default", url.Values{"on": {"true"}})
	if m, _ := site.catalog.GetModel(t.Context(), ids[2]); !m.Pinned || !m.IsDefault {
		t.Fatal("pin or default not stored")
	}
	if r := admin.get("/admin/models?connection=" + connID + "&cap=vision"); !strings.Contains(r.body, "Gamma Ray") || strings.Contains(r.body, ">beta<") {
		t.Fatal("capability filter")
	}
}

func TestModelAvatar(t *testing.T) {
	site := newSite(t)
	admin, user, _ := site.people()
	_, model := site.fakeConnection(t, "Local")

	r := admin.upload("/admin/models/"+model+"/avatar", "avatar", "logo.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="x()"/>`))
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "PNG, JPEG or WebP") {
		t.Fatalf("svg: %d", r.StatusCode)
	}
	r = admin.upload("/admin/models/"+model+"/avatar", "avatar", "face.png", testPNG(t, 600, 400))
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("png: %d %s", r.StatusCode, r.body)
	}
	m, _ := site.catalog.GetModel(t.Context(), model)
	src := m.AvatarURL()
	for _, b := range []*browser{admin, user} {
		r := b.get(src)
		if r.StatusCode != 200 || r.Header.Get("Content-Type") != "image/png" || r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("avatar: %d %q", r.StatusCode, r.Header.Get("Content-Type"))
		}
		img, err := png.Decode(strings.NewReader(r.body))
		if err != nil || img.Bounds().Dx() > 256 {
			t.Fatalf("avatar not re-encoded small: %v", err)
		}
	}
	if r := site.browser().get(src); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("anonymous avatar: %d", r.StatusCode)
	}
	path, _ := site.catalog.AvatarPath(t.Context(), model)
	admin.post("/admin/models/"+model+"/avatar/delete", nil)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("the avatar file outlived its removal")
	}
}

// A model kept to a group is in its members' picker and nobody else's, in
// the administrator's order, and only they may make it their default.
func TestModelAccessFollowsGroups(t *testing.T) {
	site := newSite(t)
	admin, member, _ := site.people()
	outsider := site.browser()
	outsider.register("outsider")
	site.fakeConnection(t, "Local", llmtest.ModelSpec{ID: "open-model"}, llmtest.ModelSpec{ID: "secret-model"})
	ids := site.modelIDs(t)
	open, secretModel := ids[0], ids[1]

	r := admin.post("/admin/groups", url.Values{"name": {"Wizards"}})
	group := strings.TrimPrefix(r.Header.Get("Location")[:strings.Index(r.Header.Get("Location"), "?")], "/admin/groups/")
	admin.post("/admin/groups/"+group+"/members", url.Values{"username": {"user"}})
	admin.post("/admin/models/"+secretModel+"/groups", url.Values{"group": {group}})
	// Put the restricted model first: the picker follows the admin's order.
	admin.post("/admin/models/"+secretModel+"/move", url.Values{"direction": {"top"}})

	options := regexp.MustCompile(`role="option" id="default_model-([^"]+)"`)
	pick := func(b *browser) []string {
		var ids []string
		for _, m := range options.FindAllStringSubmatch(b.get("/settings").body, -1) {
			if m[1] != "none" {
				ids = append(ids, m[1])
			}
		}
		return ids
	}
	if got := pick(member); len(got) != 2 || got[0] != secretModel || got[1] != open {
		t.Fatalf("member's picker: %v, want [%s %s]", got, secretModel, open)
	}
	if got := pick(outsider); len(got) != 1 || got[0] != open {
		t.Fatalf("outsider's picker: %v, want [%s]", got, open)
	}
	if r := outsider.post("/settings/preferences", url.Values{"default_model": {secretModel}}); r.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("an outsider chose a restricted model as default: %d", r.StatusCode)
	}
	if r := member.post("/settings/preferences", url.Values{"default_model": {secretModel}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("a member could not choose it: %d %s", r.StatusCode, r.body)
	}
	if r := member.get("/settings"); !strings.Contains(r.body, `name="default_model" value="`+secretModel+`"`) {
		t.Fatal("the chosen default is not shown")
	}
	if r := outsider.get("/models/" + secretModel + "/avatar"); r.StatusCode != http.StatusNotFound {
		t.Fatalf("outsider avatar: %d", r.StatusCode)
	}
}

// firstModel returns the first model of a connection.
func (s *testSite) firstModel(t testing.TB, connID string) string {
	t.Helper()
	models, _, err := s.catalog.ListModels(t.Context(), catalog.Filter{ConnectionID: connID})
	if err != nil || len(models) == 0 {
		t.Fatalf("no models: %v", err)
	}
	return models[0].ID
}

// modelIDs lists every model in the administrator's order.
func (s *testSite) modelIDs(t *testing.T) []string {
	t.Helper()
	models, _, err := s.catalog.ListModels(t.Context(), catalog.Filter{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range models {
		ids = append(ids, m.ID)
	}
	return ids
}

func (b *browser) upload(path, field, name string, data []byte) response {
	b.site.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile(field, name)
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", b.site.URL+path, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Accept", "text/html")
	res, err := b.c.Do(req)
	if err != nil {
		b.site.t.Fatal(err)
	}
	defer res.Body.Close()
	var out bytes.Buffer
	out.ReadFrom(res.Body)
	return response{Response: res, body: out.String()}
}

func testPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 120, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
