package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"lembas/internal/auth"
	"lembas/internal/chat"
)

//go:embed templates
var embeddedTemplates embed.FS

// templateFS is the templates folder itself, so names read "layout.html".
var templateFS = mustSub(embeddedTemplates, "templates")

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}

func dirFS(dir string) fs.FS { return os.DirFS(dir) }

// views holds one parsed template set per page: the shared files
// (layout.html and partials) plus that page's own file. Pages are in
// pages/NAME.html and fragments in fragments/NAME.html; a page defines
// "body", a fragment defines "fragment".
type views struct {
	fsys  fs.FS
	funcs template.FuncMap
	dev   bool

	mu  sync.RWMutex
	set map[string]*template.Template
}

func newViews(fsys fs.FS, funcs template.FuncMap, dev bool) (*views, error) {
	v := &views{fsys: fsys, funcs: funcs, dev: dev}
	set, err := v.parse()
	if err != nil {
		return nil, err
	}
	v.set = set
	return v, nil
}

func (v *views) parse() (map[string]*template.Template, error) {
	base := template.New("").Funcs(v.funcs)
	shared, err := fs.Glob(v.fsys, "*.html")
	if err != nil {
		return nil, err
	}
	if len(shared) == 0 {
		return nil, fmt.Errorf("web: no shared templates found")
	}
	if base, err = base.ParseFS(v.fsys, shared...); err != nil {
		return nil, fmt.Errorf("web: parse templates: %w", err)
	}
	set := map[string]*template.Template{}
	for _, dir := range []string{"pages", "fragments"} {
		files, err := fs.Glob(v.fsys, dir+"/*.html")
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			t, err := base.Clone()
			if err != nil {
				return nil, err
			}
			if t, err = t.ParseFS(v.fsys, f); err != nil {
				return nil, fmt.Errorf("web: parse %s: %w", f, err)
			}
			set[dir+"/"+strings.TrimSuffix(path.Base(f), ".html")] = t
		}
	}
	return set, nil
}

func (v *views) lookup(name string) (*template.Template, error) {
	if v.dev {
		set, err := v.parse()
		if err != nil {
			return nil, err
		}
		v.mu.Lock()
		v.set = set
		v.mu.Unlock()
	}
	v.mu.RLock()
	defer v.mu.RUnlock()
	t, ok := v.set[name]
	if !ok {
		return nil, fmt.Errorf("web: no template %q", name)
	}
	return t, nil
}

// names lists every page and fragment, for tests.
func (v *views) names() []string {
	v.mu.RLock()
	defer v.mu.RUnlock()
	var out []string
	for n := range v.set {
		out = append(out, n)
	}
	return out
}

// Layout is what every page's chrome needs. Each page's view struct embeds
// it, and s.layout is the one function that fills it, so no render path can
// forget the user, the theme or the brand.
type Layout struct {
	Title   string
	User    *auth.User
	Theme   string
	Brand   string
	Version string
	Path    string
	// Zone is the person's time zone (UTC until they have one); times are
	// converted only here, at display.
	Zone *time.Location
	// Recent are the person's latest chats, for the sidebar.
	Recent []chat.Chat
}

// Local formats t in the person's time zone.
func (l Layout) Local(t time.Time) string {
	zone := l.Zone
	if zone == nil {
		zone = time.UTC
	}
	return t.In(zone).Format("2 Jan 2006 15:04 MST")
}

// ZoneUnset says the browser should offer its time zone once.
func (l Layout) ZoneUnset() bool { return l.User != nil && l.User.Timezone == "" }

func (s *Server) layout(r *http.Request, title string) Layout {
	u := currentUser(r)
	return Layout{
		Title:   title,
		User:    u,
		Theme:   themeFor(r, u),
		Brand:   s.settings.General().InstanceName,
		Version: s.version,
		Path:    r.URL.Path,
		Zone:    zoneOf(u),
		Recent:  s.recent(r, u),
	}
}

// recent lists the sidebar's chats. A failure costs the sidebar, not the
// page.
func (s *Server) recent(r *http.Request, u *auth.User) []chat.Chat {
	if u == nil || s.chats == nil {
		return nil
	}
	list, err := s.chats.List(r.Context(), u.ID, 50)
	if err != nil {
		s.log.Warn("sidebar chats", "err", err)
		return nil
	}
	return list
}

func zoneOf(u *auth.User) *time.Location {
	if u == nil || u.Timezone == "" {
		return time.UTC
	}
	if z, err := time.LoadLocation(u.Timezone); err == nil {
		return z
	}
	return time.UTC
}

// themeCookie remembers a browser's theme for pages seen while signed out
// (the sign-in page after signing out), so they do not flash the other one.
// It holds only a theme name.
const themeCookie = "lembas_theme"

func themeFor(r *http.Request, u *auth.User) string {
	if u != nil && auth.ValidTheme(u.Theme) {
		return u.Theme
	}
	if c, err := r.Cookie(themeCookie); err == nil && auth.ValidTheme(c.Value) {
		return c.Value
	}
	return auth.Themes[0]
}

// page renders a full page with status.
func (s *Server) page(w http.ResponseWriter, status int, name string, view any) error {
	return s.execute(w, status, "pages/"+name, "document", view)
}

// fragment renders a piece of a page for an htmx swap.
func (s *Server) fragment(w http.ResponseWriter, status int, name string, view any) error {
	return s.execute(w, status, "fragments/"+name, "fragment", view)
}

// execute renders into a buffer first, so a template error becomes a clean
// 500 instead of half a page.
func (s *Server) execute(w http.ResponseWriter, status int, set, entry string, view any) error {
	t, err := s.views.lookup(set)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, entry, view); err != nil {
		return fmt.Errorf("web: render %s: %w", set, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, err = buf.WriteTo(w)
	return err
}

func (s *Server) funcs() template.FuncMap {
	return template.FuncMap{
		"asset":     func(name string) (string, error) { return s.assets.url(name) },
		"flavour":   flavourLine,
		"hasPrefix": strings.HasPrefix,
		"phaseText": phaseText,
		"initial": func(name string) string {
			for _, r := range name {
				return strings.ToUpper(string(r))
			}
			return "?"
		},
	}
}
