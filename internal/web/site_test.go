package web

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestHealthz(t *testing.T) {
	site := newSite(t)
	r := site.browser().get("/healthz")
	if r.StatusCode != 200 || strings.TrimSpace(r.body) != `{"status":"ok"}` {
		t.Fatalf("healthz: %d %q", r.StatusCode, r.body)
	}
	site.db.R.Close()
	r = site.browser().get("/healthz")
	if r.StatusCode != http.StatusServiceUnavailable || strings.Contains(r.body, "sql") {
		t.Fatalf("healthz with the database gone: %d %q (must be 503 and reveal nothing)", r.StatusCode, r.body)
	}
}

func TestSecurityHeadersOnEveryKindOfResponse(t *testing.T) {
	site := newSite(t)
	b := site.browser()
	for _, p := range []string{"/auth/register", "/healthz", "/nowhere", "/static/css/app.css", "/sw.js"} {
		r := b.get(p)
		if r.Header.Get("Content-Security-Policy") != contentSecurityPolicy {
			t.Errorf("%s: CSP = %q", p, r.Header.Get("Content-Security-Policy"))
		}
		if r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("%s: missing nosniff or referrer policy", p)
		}
	}
}

func TestThemed404And405(t *testing.T) {
	site := newSite(t)
	r := site.browser().get("/no/such/page")
	if r.StatusCode != 404 || !strings.Contains(r.body, "Not all those who wander are lost. This page, however, is.") {
		t.Fatalf("404: %d", r.StatusCode)
	}
	r = site.browser().do("DELETE", "/settings", nil)
	if r.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(r.Header.Get("Allow"), "GET") {
		t.Fatalf("wrong method: %d allow=%q", r.StatusCode, r.Header.Get("Allow"))
	}
}

func TestCrossOriginPostsAreRefused(t *testing.T) {
	site := newSite(t)
	r := site.browser().post("/auth/register",
		url.Values{"username": {"mallory"}, "password": {"password1"}, "password_confirm": {"password1"}},
		"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
	if r.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site register: %d", r.StatusCode)
	}
	if n, _ := site.auth.CountUsers(t.Context()); n != 0 {
		t.Fatal("the cross-site request created an account")
	}
}

func TestOversizedFormIs413WithAMessage(t *testing.T) {
	site := newSite(t)
	big := url.Values{"username": {strings.Repeat("a", 2<<20)}, "password": {"x"}}
	r := site.browser().post("/auth/login", big)
	if r.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(r.body, "too large") {
		t.Fatalf("oversized form: %d", r.StatusCode)
	}
}

func TestPanicsBecomeA500Page(t *testing.T) {
	site := newSite(t)
	h := site.web.recoverPanics(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := httptest.NewRecorder()
	req, _ := http.NewRequest("GET", "/", nil)
	req.Header.Set("Accept", "text/html")
	h.ServeHTTP(rec, req)
	if rec.Code != 500 || strings.Contains(rec.Body.String(), "boom") {
		t.Fatalf("panic: %d (the panic value must not reach the page)", rec.Code)
	}
}

func TestStaticFilesHaveHashedImmutableURLs(t *testing.T) {
	site := newSite(t)
	u, err := site.web.assets.url("css/app.css")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^/static/css/app\.[0-9a-f]{12}\.css$`).MatchString(u) {
		t.Fatalf("url %q is not content-hashed", u)
	}
	b := site.browser()
	r := b.get(u)
	if r.StatusCode != 200 || !strings.Contains(r.Header.Get("Cache-Control"), "immutable") || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/css") {
		t.Fatalf("hashed: %d %q %q", r.StatusCode, r.Header.Get("Cache-Control"), r.Header.Get("Content-Type"))
	}
	r = b.get("/static/css/app.000000000000.css")
	if r.StatusCode != 404 {
		t.Fatalf("a wrong hash was served: %d", r.StatusCode)
	}
	r = b.get("/static/../go.mod")
	if r.StatusCode == 200 {
		t.Fatal("path traversal out of static/")
	}
}

func TestManifestAndServiceWorker(t *testing.T) {
	site := newSite(t)
	b := site.browser()
	r := b.get("/manifest.webmanifest")
	var m struct {
		Name  string
		Icons []struct{ Src, Sizes string }
	}
	if err := json.Unmarshal([]byte(r.body), &m); err != nil || m.Name != "LLeMbas" || len(m.Icons) < 3 {
		t.Fatalf("manifest: %v %+v", err, m)
	}
	for _, ic := range m.Icons {
		if r := b.get(ic.Src); r.StatusCode != 200 || r.Header.Get("Content-Type") != "image/png" {
			t.Errorf("icon %s: %d", ic.Src, r.StatusCode)
		}
	}
	r = b.get("/sw.js")
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("sw.js type %q", r.Header.Get("Content-Type"))
	}
	for _, want := range []string{`(api|auth|admin)`, "text/event-stream", `"lembas-test-`, "/offline"} {
		if !strings.Contains(r.body, want) {
			t.Errorf("sw.js lacks %q", want)
		}
	}
	if strings.Contains(r.body, "__CACHE__") || strings.Contains(r.body, "__SHELL__") {
		t.Error("sw.js placeholders not filled")
	}
}

// The rule that keeps model output harmless: template.HTML appears only in
// the render package, where the sanitiser is.
func TestTemplateHTMLOnlyInRender(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		if strings.Contains(filepath.ToSlash(p), "internal/render/") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "template.HTML(") {
			t.Errorf("%s uses template.HTML( outside internal/render", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// browserDialog finds a call of the browser's own dialogs.
var browserDialog = []*regexp.Regexp{
	regexp.MustCompile(`\b(window|self|globalThis|top|parent)\s*\.\s*(confirm|alert|prompt)\b`),
	regexp.MustCompile(`(^|[^.\w$-])(confirm|alert|prompt)\s*\(`),
}

// Our dialogs replace the browser's: no window.confirm, alert or prompt
// in any script or template, called directly or through window. Our own
// lembas.confirm(…) is a method call and passes.
func TestNoBrowserDialogs(t *testing.T) {
	for _, dir := range []string{"static/js", "templates"} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, re := range browserDialog {
				if m := re.FindString(string(b)); m != "" {
					t.Errorf("%s: browser dialog %q", p, strings.TrimSpace(m))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestNoBrowserDialogsCatchesThem(t *testing.T) {
	bad := []string{"window.confirm('x')", "if (confirm('sure?'))", "alert(1)", "x = prompt('name')", "globalThis.alert"}
	good := []string{"lembas.confirm('x')", "// hx-confirm (through htmx)", "await lembas.prompt('n')", "confirmLabel: 'OK'", "data-confirm=\"x\""}
	match := func(s string) bool {
		for _, re := range browserDialog {
			if re.MatchString(s) {
				return true
			}
		}
		return false
	}
	for _, s := range bad {
		if !match(s) {
			t.Errorf("missed %q", s)
		}
	}
	for _, s := range good {
		if match(s) {
			t.Errorf("flagged %q", s)
		}
	}
}
