package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
)

// recorder collects what a tab's page complains about, and its requests.
// Its listen method runs on the tab's event loop, in the order events
// arrive; tests read it from their own goroutine, hence the lock.
type recorder struct {
	mu       sync.Mutex
	problems []string
	requests map[network.RequestID]*request // latest hop of each request
	sent     []*request                     // every hop, in order
	native   int                            // native dialogs opened
}

// request is one HTTP request of the page, as far as it has got.
type request struct {
	method, url string
	kind        network.ResourceType
	status      int64  // 0 until answered
	failure     string // why it failed or was cancelled, if it was
}

func (r *recorder) problem(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// listen must return fast and run no command: it is called on the tab's
// event loop.
func (r *recorder) listen(ev any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		switch ev.Type {
		case runtime.ConsoleAPICalledTypeError, runtime.ConsoleAPICalledTypeWarning, runtime.ConsoleAPICalledTypeAssert:
			r.problem("console.%s: %s", ev.Type, argsText(ev.Args))
		}
	case *runtime.EventExceptionThrown:
		r.problem("uncaught exception: %s", exceptionText(ev.ExceptionDetails))
	case *log.EventEntryAdded:
		// CSP violations, failed loads and interventions arrive here.
		e := ev.Entry
		if e.Level != log.EntryLevelError && e.Level != log.EntryLevelWarning {
			return
		}
		if req := r.requests[e.NetworkRequestID]; req != nil && req.kind == network.ResourceTypeDocument {
			return // a page's own status is its test's business (a 404 page is meant to be one)
		}
		r.problem("browser %s (%s): %s %s", e.Level, e.Source, e.Text, e.URL)
	case *network.EventRequestWillBeSent:
		req := &request{method: ev.Request.Method, url: ev.Request.URL, kind: ev.Type}
		r.requests[ev.RequestID] = req
		r.sent = append(r.sent, req)
	case *network.EventResponseReceived:
		req := r.requests[ev.RequestID]
		if req == nil {
			return
		}
		req.status = ev.Response.Status
		if req.kind != network.ResourceTypeDocument && req.status >= 400 {
			r.problem("%s %s (%s) answered %d", req.method, req.url, req.kind, req.status)
		}
	case *network.EventLoadingFailed:
		req := r.requests[ev.RequestID]
		if req == nil {
			req = &request{url: "(unknown URL)", kind: ev.Type}
		}
		req.failure = ev.ErrorText
		// Leaving a page cancels what it still loads; that is not a
		// failure. Anything blocked (by the CSP, say) is.
		if ev.Canceled && ev.BlockedReason == "" {
			return
		}
		reason := ev.ErrorText
		if ev.BlockedReason != "" {
			reason = strings.TrimPrefix(reason+", blocked: "+string(ev.BlockedReason), ", ")
		}
		r.problem("%s %s (%s) failed: %s", req.method, req.url, req.kind, reason)
	case *page.EventJavascriptDialogOpening:
		r.native++
		r.problem("a native %s dialog opened: %q (the app must use its own dialogs)", ev.Type, ev.Message)
	}
}

// take returns the problems so far and forgets them.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.problems
	r.problems = nil
	return p
}

// peek returns the problems so far and keeps them for assertClean.
func (r *recorder) peek() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.problems...)
}

// answered returns the latest method request to path once the server has
// answered it (or it failed). The answer is what counts, not the end of
// the body: Chromium reports a fetch whose body the page never reads as
// aborted, even a 204 that has none.
func (r *recorder) answered(method, path string) (request, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.sent) - 1; i >= 0; i-- {
		req := r.sent[i]
		if req.method == method && urlPath(req.url) == path {
			return *req, req.status != 0 || req.failure != ""
		}
	}
	return request{}, false
}

// nativeDialogs says how many alert, confirm, prompt or beforeunload
// dialogs of the browser's own have opened.
func (r *recorder) nativeDialogs() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.native
}

// count says how many method requests to path the page has sent.
func (r *recorder) count(method, path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, req := range r.sent {
		if req.method == method && urlPath(req.url) == path {
			n++
		}
	}
	return n
}

func urlPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Path
}

// argsText renders console arguments roughly as DevTools shows them.
func argsText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		parts = append(parts, objectText(a))
	}
	return strings.Join(parts, " ")
}

func objectText(o *runtime.RemoteObject) string {
	if o == nil {
		return ""
	}
	if o.Type == runtime.RemoteObjectTypeString {
		var s string
		if err := json.Unmarshal([]byte(o.Value), &s); err == nil {
			return s
		}
	}
	switch {
	case o.Description != "":
		return o.Description
	case o.UnserializableValue != "":
		return string(o.UnserializableValue)
	case len(o.Value) > 0:
		return string(o.Value)
	}
	return string(o.Type)
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "(no details)"
	}
	text := d.Text
	if d.Exception != nil {
		text += " " + objectText(d.Exception)
	}
	if d.URL != "" {
		text += fmt.Sprintf(" at %s:%d:%d", d.URL, d.LineNumber+1, d.ColumnNumber+1)
	}
	return text
}
