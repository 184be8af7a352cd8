package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"lembas/internal/web/static"
)

func staticFS() fs.FS { return static.FS }

// assets serves static files under content-hashed names
// (/static/css/app.3f9a1c2b7d.css), cached forever: a changed file gets a
// new name, so a browser can never hold a stale one. The plain name is also
// served, uncached, for the few places a fixed URL is needed.
type assets struct {
	fsys   fs.FS
	urls   map[string]string // "css/app.css" -> "/static/css/app.<hash>.css"
	hashed map[string]string // "css/app.<hash>.css" -> "css/app.css"
	hashes map[string]string // "css/app.css" -> hash
}

func newAssets(fsys fs.FS) (*assets, error) {
	a := &assets{fsys: fsys, urls: map[string]string{}, hashed: map[string]string{}, hashes: map[string]string{}}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasSuffix(p, ".go") {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		h := hex.EncodeToString(sum[:])[:12]
		ext := path.Ext(p)
		name := strings.TrimSuffix(p, ext) + "." + h + ext
		a.urls[p] = "/static/" + name
		a.hashed[name] = p
		a.hashes[p] = h
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web: hash static files: %w", err)
	}
	return a, nil
}

// url returns the hashed URL of a static file; an unknown name is an error
// so a typo in a template fails its render test instead of a browser.
func (a *assets) url(name string) (string, error) {
	u, ok := a.urls[name]
	if !ok {
		return "", fmt.Errorf("web: no static file %q", name)
	}
	return u, nil
}

// fingerprint is one hash over every static file, for the service worker's
// cache name.
func (a *assets) fingerprint() string {
	h := sha256.New()
	for _, p := range slices.Sorted(maps.Keys(a.hashes)) {
		fmt.Fprintf(h, "%s=%s\n", p, a.hashes[p])
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

func (s *Server) serveStatic(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("path")
	logical, immutable := s.assets.hashed[name]
	if !immutable {
		if _, ok := s.assets.urls[name]; !ok {
			s.notFound(w, r)
			return
		}
		logical = name
	}
	b, err := fs.ReadFile(s.assets.fsys, logical)
	if err != nil {
		s.notFound(w, r)
		return
	}
	ctype := mime.TypeByExtension(path.Ext(logical))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ctype)
	if immutable {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
}
