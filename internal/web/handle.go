package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"lembas/internal/fault"
)

// handlerFunc is the shape of every handler: it returns an error and lets
// handle answer it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts a handlerFunc, answering its error once: the kind decides
// the status, the person sees a safe sentence, and only internal errors are
// logged in full (the request log already records every status).
func (s *Server) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.fail(w, r, err)
		}
	})
}

// statusOf maps an error's kind to an HTTP status.
func statusOf(err error) int {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge
	}
	switch fault.KindOf(err) {
	case fault.Invalid:
		return http.StatusUnprocessableEntity
	case fault.NotFound:
		return http.StatusNotFound
	case fault.Forbidden:
		return http.StatusForbidden
	case fault.Conflict:
		return http.StatusConflict
	case fault.TooMany:
		return http.StatusTooManyRequests
	case fault.TooLarge:
		return http.StatusRequestEntityTooLarge
	case fault.Unauthorized:
		return http.StatusUnauthorized
	case fault.MethodNotAllowed:
		return http.StatusMethodNotAllowed
	}
	return http.StatusInternalServerError
}

// fail answers err: a full error page for a page load, a short fragment
// for an htmx request (so it can be shown in place as a toast), plain text
// for anything else.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	message := "Something went wrong on our side. It has been logged."
	if fe, ok := fault.As(err); ok && status != http.StatusInternalServerError {
		message = fe.Message
	} else if status == http.StatusRequestEntityTooLarge {
		message = "That request is too large."
	}
	if status == http.StatusInternalServerError {
		s.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path,
			"request_id", requestID(r.Context()), "err", err)
	} else {
		s.log.DebugContext(r.Context(), "request refused", "status", status, "err", err)
	}
	if status == http.StatusUnauthorized && r.Method == http.MethodGet && !isHTMX(r) {
		http.Redirect(w, r, loginURL(r), http.StatusSeeOther)
		return
	}
	if isHTMX(r) || !acceptsHTML(r) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Lembas-Error", url.PathEscape(message))
		w.WriteHeader(status)
		_, _ = w.Write([]byte(message))
		return
	}
	s.errorPage(w, r, status, message)
}

func isHTMX(r *http.Request) bool { return r.Header.Get("HX-Request") == "true" }

func acceptsHTML(r *http.Request) bool {
	a := r.Header.Get("Accept")
	return a == "" || strings.Contains(a, "text/html") || strings.Contains(a, "*/*")
}

// loginURL sends a person to sign in and back to where they were.
func loginURL(r *http.Request) string {
	next := r.URL.RequestURI()
	if next == "/" || next == "" {
		return "/auth/login"
	}
	return "/auth/login?next=" + url.QueryEscape(next)
}

// safeNext accepts only a local path as a place to return to after sign-in,
// so the login form cannot be used to send people to another site.
func safeNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Host != "" || u.Scheme != "" {
		return "/"
	}
	return next
}

// parseForm reads a form body under the size limit, turning an oversized
// body into a 413 with a sentence rather than a truncated form.
func parseForm(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return fault.Wrap(fault.TooLarge, "That form is too large to accept.", err)
		}
		return fault.Wrap(fault.Invalid, "That form could not be read.", err)
	}
	return nil
}

// maxFormBytes caps an ordinary form body; uploads have their own limit.
const maxFormBytes = 1 << 20
