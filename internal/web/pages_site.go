package web

import (
	"encoding/json"
	"net/http"
	"strings"
)

// healthz answers whether the database answers, and nothing else.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err := s.ping(r.Context()); err != nil {
		s.log.Error("healthz", "err", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"unavailable"}`))
		return nil
	}
	_, _ = w.Write([]byte(`{"status":"ok"}`))
	return nil
}

func (s *Server) manifest(w http.ResponseWriter, r *http.Request) error {
	name := s.settings.General().InstanceName
	icon := func(file, size, purpose string) map[string]string {
		u, _ := s.assets.url("img/" + file)
		return map[string]string{"src": u, "sizes": size, "type": "image/png", "purpose": purpose}
	}
	m := map[string]any{
		"name":             name,
		"short_name":       name,
		"start_url":        "/",
		"scope":            "/",
		"display":          "standalone",
		"background_color": "#1b1d22",
		"theme_color":      "#1b1d22",
		"icons": []map[string]string{
			icon("icon-192.png", "192x192", "any"),
			icon("icon-512.png", "512x512", "any"),
			icon("icon-maskable-512.png", "512x512", "maskable"),
		},
	}
	w.Header().Set("Content-Type", "application/manifest+json")
	w.Header().Set("Cache-Control", "no-cache")
	return json.NewEncoder(w).Encode(m)
}

// serviceWorker is served from the root because a worker's scope is the
// path it came from. Its cache is named for the version and the static
// files' fingerprint, so a new release replaces the old shell.
func (s *Server) serviceWorker(w http.ResponseWriter, r *http.Request) error {
	var shell []string
	for _, name := range []string{"css/tokens.css", "css/app.css", "css/code.css", "js/ui.js", "js/app.js", "js/picker.js", "js/chat.js",
		"vendor/htmx/htmx.min.js", "vendor/htmx/hx-sse.min.js", "img/mark.svg", "img/favicon.svg"} {
		u, err := s.assets.url(name)
		if err != nil {
			return err
		}
		shell = append(shell, u)
	}
	shell = append(shell, "/offline")
	list, _ := json.Marshal(shell)
	cache, _ := json.Marshal("lembas-" + s.version + "-" + s.assets.fingerprint())
	body := strings.NewReplacer("__CACHE__", string(cache), "__SHELL__", string(list)).Replace(serviceWorkerJS)
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Service-Worker-Allowed", "/")
	_, err := w.Write([]byte(body))
	return err
}

// serviceWorkerJS caches the shell and the offline page. It never touches
// /api/, /auth/, /admin/ or an event stream: a reply is an endless stream,
// and passing one through a worker delivers it all at the end, or never.
const serviceWorkerJS = `// LLeMbas service worker: caches the app shell, nothing else.
const CACHE = __CACHE__;
const SHELL = __SHELL__;

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((c) => c.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim())
  );
});

function bypass(request) {
  if (request.method !== "GET") return true;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return true;
  if (/^\/(api|auth|admin)(\/|$)/.test(url.pathname)) return true;
  if ((request.headers.get("Accept") || "").includes("text/event-stream")) return true;
  return false;
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (bypass(request)) return;
  const url = new URL(request.url);
  if (url.pathname.startsWith("/static/")) {
    event.respondWith(caches.match(request).then((hit) => hit || fetch(request)));
    return;
  }
  if (request.mode === "navigate") {
    event.respondWith(fetch(request).catch(() => caches.match("/offline")));
  }
});
`

type errorView struct {
	Layout
	Status  int
	Message string
	Line    string
}

// offlinePage is what the service worker shows when the network is gone.
func (s *Server) offlinePage(w http.ResponseWriter, r *http.Request) error {
	v := errorView{Layout: s.layout(r, "Offline"), Status: 0,
		Message: "LLeMbas cannot reach its server. Check the connection and try again.",
		Line:    flavourLine("offline")}
	return s.page(w, http.StatusOK, "error", v)
}

func (s *Server) favicon(w http.ResponseWriter, r *http.Request) error {
	u, err := s.assets.url("img/favicon-32.png")
	if err != nil {
		return err
	}
	http.Redirect(w, r, u, http.StatusMovedPermanently)
	return nil
}

// notFound is the themed 404.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.errorPage(w, r, http.StatusNotFound, "")
}

// errorPage renders the themed page for status. It never fails: if the
// template itself cannot render, a plain sentence goes out instead.
func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, status int, message string) {
	key := "error"
	title := http.StatusText(status)
	switch status {
	case http.StatusNotFound:
		key = "404"
		title = "Page not found"
		if message == "" || message == "Not found." {
			message = "There is nothing at this address, or nothing you can see."
		}
	case http.StatusForbidden:
		key = "403"
		title = "Not allowed"
	}
	v := errorView{Layout: s.layout(r, title), Status: status, Message: message, Line: flavourLine(key)}
	if err := s.page(w, status, "error", v); err != nil {
		s.log.Error("render error page", "err", err)
		http.Error(w, message, status)
	}
}
