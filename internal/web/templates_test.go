package web

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"lembas/internal/auth"
	"lembas/internal/catalog"
	"lembas/internal/chat"
	"lembas/internal/settings"
)

// Every control in a template must reach a route that serves its method.
// The original shipped a button posting to a PATCH-only route, silently.
func TestEveryTemplateTargetHasARoute(t *testing.T) {
	site := newSite(t)
	mux := http.NewServeMux()
	site.web.routes(mux)

	attr := regexp.MustCompile(`(?s)\s(hx-get|hx-post|hx-put|hx-patch|hx-delete|action|href|hx-sse:connect)="((?:\{\{.*?\}\}|[^"])*)"`)
	expr := regexp.MustCompile(`\{\{.*?\}\}`)
	control := regexp.MustCompile(`\{\{-?\s*(if|else|end|range|with)\b.*?\}\}`)
	formMethod := regexp.MustCompile(`(?s)<form\b[^>]*>`)

	checked := 0
	err := fs.WalkDir(templateFS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := fs.ReadFile(templateFS, p)
		if err != nil {
			return err
		}
		src := string(raw)
		// A form's action is posted with the form's method (GET when absent).
		methodOfAction := map[int]string{}
		for _, loc := range formMethod.FindAllStringIndex(src, -1) {
			tag := src[loc[0]:loc[1]]
			m := "GET"
			if strings.Contains(strings.ToLower(tag), `method="post"`) {
				m = "POST"
			}
			if i := strings.Index(tag, ` action="`); i >= 0 {
				methodOfAction[loc[0]+i+1] = m
			}
		}
		for _, m := range attr.FindAllStringSubmatchIndex(src, -1) {
			name, target := src[m[2]:m[3]], src[m[4]:m[5]]
			method := map[string]string{"hx-get": "GET", "hx-post": "POST", "hx-put": "PUT",
				"hx-patch": "PATCH", "hx-delete": "DELETE", "hx-sse:connect": "GET", "href": "GET"}[name]
			if name == "action" {
				method = methodOfAction[m[2]]
				if method == "" {
					t.Errorf("%s: action=%q outside a <form> tag", p, target)
					continue
				}
			}
			// Only our own paths; hrefs to pages are checked too, but
			// {{asset}} URLs and anchors are not routes in the table.
			path := expr.ReplaceAllString(control.ReplaceAllString(target, ""), "x")
			if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "/static/") || strings.Contains(target, "asset ") {
				continue
			}
			if i := strings.IndexAny(path, "?#"); i >= 0 {
				path = path[:i]
			}
			req := httptest.NewRequest(method, path, nil)
			if _, pattern := mux.Handler(req); pattern == "" {
				t.Errorf("%s: %s %s (%s=%q) has no route", p, method, path, name, target)
			}
			checked++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 5 {
		t.Fatalf("only %d targets checked: the scanner is broken", checked)
	}
}

// Every page and fragment renders with representative data. A new
// template must add a sample here.
func TestEveryTemplateRenders(t *testing.T) {
	site := newSite(t)
	req := httptest.NewRequest("GET", "/", nil)
	anon := site.web.layout(req, "Sample")
	admin := anon
	admin.User = &auth.User{ID: "u1", Username: "Éowyn", IsAdmin: true, Theme: "shire"}
	now := time.Now()
	samples := map[string][]any{
		"pages/auth": {
			authView{Layout: anon, Mode: "login", Next: "/", Errors: map[string]string{"username": "x"}, SignupOpen: true},
			authView{Layout: anon, Mode: "register", Next: "/settings", Errors: map[string]string{}, SignupOpen: true, FirstAccount: true},
			authView{Layout: anon, Mode: "register", Errors: map[string]string{}, SignupOpen: false, Message: "closed"},
		},
		"pages/error": {errorView{Layout: anon, Status: 404, Message: "m", Line: "l"}, errorView{Layout: admin, Status: 0}},
		"pages/settings": {settingsView{Layout: admin, Themes: auth.Themes, Errors: map[string]string{"new_password": "x"},
			Sessions: []sessionRow{{ID: "a", Current: true, LastSeen: now}, {ID: "b", UserAgent: "Firefox", IP: "1.2.3.4", LastSeen: now}}}},
		"pages/admin_general": {adminGeneralView{Layout: admin, General: settings.General{InstanceName: "x", AllowSignup: true},
			Sources: map[string]settings.Source{"allow_signup": settings.FromEnv}, EnvNames: map[string]string{"allow_signup": "LEMBAS_ALLOW_SIGNUP"},
			Errors: map[string]string{}}},
	}
	group := auth.Group{ID: "g1", Name: "Fellowship", Description: "Nine walkers", Grants: []string{"chat.links"}, Members: 2}
	samples["pages/admin_users"] = []any{
		adminUsersView{Layout: admin, Users: []auth.User{*admin.User, {ID: "u2", Username: "sam", Disabled: true}},
			Pager: pager{Total: 120, Offset: 50, Limit: 50, Query: "s", Base: "/admin/users"}, Errors: map[string]string{"username": "x"}},
		adminUsersView{Layout: admin, Pager: pager{Query: "zz", Base: "/admin/users"}, Errors: map[string]string{}},
	}
	samples["pages/admin_user"] = []any{adminUserView{Layout: admin, Subject: auth.User{ID: "u2", Username: "sam", Disabled: true, Timezone: "Europe/London"},
		Groups: []auth.Group{group}, Explain: []auth.Explanation{{Permission: auth.Permissions()[0], On: true, Baseline: true, Groups: []string{"Fellowship"}}},
		Limits: []limitRow{{Label: "Tokens a month", Value: "No limit"}}, Usage: auth.Usage{PromptTokens: 10, EstimatedTokens: 3},
		Errors: map[string]string{"password": "x"}, Notice: "n", NoticeError: "e"}}
	samples["pages/admin_groups"] = []any{adminGroupsView{Layout: admin, Groups: []auth.Group{group}, Permissions: auth.Permissions(),
		Baseline: auth.Set{"chat.links": true}, Errors: map[string]string{}}}
	samples["pages/admin_group"] = []any{adminGroupView{Layout: admin, Group: group, Members: []auth.User{*admin.User},
		Permissions: auth.Permissions(), Granted: map[string]bool{"chat.links": true},
		Axes: []limitField{{Key: "monthly_tokens", Label: "Tokens a month", Value: "5"}}, Errors: map[string]string{"monthly_tokens": "x", "form": "y"}}}
	conn := catalog.Connection{ID: "c1", Name: "Ollama", BaseURL: "http://localhost:11434/v1", HasKey: true, KeyMask: "••••••••abcd",
		HeaderNames: []string{"HTTP-Referer"}, Enabled: true, LastStatus: "error", LastError: "Could not connect.", LastCheckedAt: now,
		FromEnvironment: true, ModelCount: 2, KeyUnreadable: true}
	temp, maxTok := 0.7, 4096
	model := catalog.Model{ID: "m1", ConnectionID: "c1", ConnectionName: "Ollama", UpstreamName: "llama3:8b", DisplayName: "Llama",
		Enabled: true, Pinned: true, IsDefault: true, Available: false, Hidden: true, Caps: catalog.Caps{Vision: true, Reasoning: true},
		CapsSource: catalog.SourceUpstream, ContextLength: 8192, ContextLengthSource: catalog.SourceAdmin, Temperature: &temp, MaxTokens: &maxTok,
		Effort: "off", UpstreamDescription: "A model", PromptPrice: "0.000001", CompletionPrice: "0.000002", Restricted: true}
	samples["pages/admin_connections"] = []any{
		adminConnectionsView{Layout: admin, Connections: []catalog.Connection{conn, {ID: "c2", Name: "x", LastStatus: "ok"}, {ID: "c3"}},
			Form: catalog.ConnectionForm{Timeout: "10"}, Errors: map[string]string{"base_url": "x"}},
		adminConnectionsView{Layout: admin, Errors: map[string]string{}},
	}
	samples["pages/admin_connection"] = []any{adminConnectionView{Layout: admin, Conn: conn, Form: catalog.ConnectionForm{Name: "Ollama"},
		Status: statusOfConnection(conn), Errors: map[string]string{"headers": "x"}, Notice: "n"}}
	samples["fragments/connection_status"] = []any{statusOfConnection(conn), statusOfConnection(catalog.Connection{})}
	samples["pages/admin_models"] = []any{
		adminModelsView{Layout: admin, Models: []catalog.Model{model, {ID: "m2", UpstreamName: "b", Enabled: true, Available: true, ConnectionEnabled: true}},
			Pager: pager{Total: 60, Limit: 50, Base: "/admin/models"}, Connections: []catalog.Connection{conn}, Caps: []string{"vision"},
			Tabs: []modelTab{{Key: "all", Label: "All", Current: true, URL: "/admin/models"}}, Back: "/admin/models"},
		adminModelsView{Layout: admin, Filter: catalog.Filter{Query: "zz"}},
	}
	samples["pages/admin_model"] = []any{
		adminModelView{Layout: admin, Model: model, Form: catalog.FormOf(model), Efforts: catalog.Efforts(),
			Groups: []groupChoice{{ID: "g1", Name: "Fellowship", Chosen: true}}, Errors: map[string]string{"temperature": "x", "form": "y"}},
		adminModelView{Layout: admin, Model: catalog.Model{ID: "m2", UpstreamName: "b"}, Errors: map[string]string{}},
	}
	picker := pickerView{Name: "default_model", Empty: "The instance default", Models: []catalog.PickerModel{
		{ID: "m1", Name: "Llama", Description: "Fast", Badges: []string{"vision"}, AvatarURL: "/models/m1/avatar?v=1"}, {ID: "m2", Name: "Beta"}}}
	picker.Selected = picker.Models[1]
	samples["pages/settings"] = append(samples["pages/settings"], settingsView{Layout: admin, Errors: map[string]string{}, ModelPicker: picker},
		settingsView{Layout: admin, Errors: map[string]string{}, ModelPicker: pickerView{Name: "x"}})
	c := chat.Chat{ID: "c1", Title: "Lembas"}
	n := 12
	msgs := []messageView{
		bubble(chat.Message{ID: "u1", ChatID: "c1", Role: chat.RoleUser, Content: "Hi <b>there</b>", Status: chat.StatusDone}, false),
		bubble(chat.Message{ID: "a1", ChatID: "c1", Role: chat.RoleAssistant, Content: "**Hello**", HTML: "<p><strong>Hello</strong></p>",
			Reasoning: "hmm", ReasoningMS: 2300, Status: chat.StatusDone, ModelName: "Llama",
			Metrics: chat.Metrics{PromptTokens: &n, CompletionTokens: &n, ContextTokens: &n, Estimated: true, ContextLength: 8192}}, true),
		bubble(chat.Message{ID: "a2", ChatID: "c1", Role: chat.RoleAssistant, Status: chat.StatusError, Error: "Could not connect."}, false),
		bubble(chat.Message{ID: "a3", ChatID: "c1", Role: chat.RoleAssistant, Status: chat.StatusInterrupted, Content: "half"}, false),
		bubble(chat.Message{ID: "a4", ChatID: "c1", Role: chat.RoleAssistant, Status: chat.StatusStopped, Content: "stop"}, false),
		bubble(chat.Message{ID: "a5", ChatID: "c1", Role: chat.RoleAssistant, Status: chat.StatusStreaming}, false),
		bubble(chat.Message{ID: "u2", ChatID: "c1", Role: chat.RoleUser, Content: "later", Status: chat.StatusQueued}, false),
	}
	samples["pages/chat"] = []any{
		chatPageView{Layout: admin, Picker: picker, Error: "Choose a model.", Draft: "draft"},
		chatPageView{Layout: admin, Chat: &c, Messages: msgs, Busy: true, Settings: chatSettingsView{ChatID: "c1", Efforts: chat.Efforts,
			Effort: "off", Inherited: "Be kind.", InheritedBy: "model", Errors: map[string]string{}}},
	}
	samples["fragments/message"] = []any{msgs[0], msgs[1], msgs[5]}
	samples["fragments/messages"] = []any{msgs}
	samples["fragments/chat_title"] = []any{c}
	for _, name := range site.web.views.names() {
		views, ok := samples[name]
		if !ok {
			t.Errorf("template %s has no sample in TestEveryTemplateRenders", name)
			continue
		}
		for i, v := range views {
			rec := httptest.NewRecorder()
			kind, short, _ := strings.Cut(name, "/")
			var err error
			if kind == "pages" {
				err = site.web.page(rec, 200, short, v)
			} else {
				err = site.web.fragment(rec, 200, short, v)
			}
			if err != nil {
				t.Errorf("%s sample %d: %v", name, i, err)
			}
			if strings.Contains(rec.Body.String(), "<no value>") {
				t.Errorf("%s sample %d renders <no value>", name, i)
			}
		}
	}
}

// No template may carry inline style or script: the CSP would block it,
// silently.
func TestTemplatesHaveNoInlineStyleOrScript(t *testing.T) {
	inline := regexp.MustCompile(`(?i)\sstyle="|<style|<script>|<script\s[^>]*>[^<\s]|\son[a-z]+="|hx-on`)
	fs.WalkDir(templateFS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, _ := fs.ReadFile(templateFS, p)
		if m := inline.FindString(string(raw)); m != "" {
			t.Errorf("%s: inline %q", p, m)
		}
		return nil
	})
}
