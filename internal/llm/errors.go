package llm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// ErrorKind says what went wrong talking to an endpoint, so a caller can
// decide what to do (mark a connection down, keep a partial reply, say
// "stopped") without reading the sentence.
type ErrorKind int

const (
	KindInvalid     ErrorKind = iota + 1 // the endpoint or request is unusable as given
	KindConnect                          // nothing accepted the connection, or it was reset
	KindDNS                              // the host name does not resolve
	KindTLS                              // the secure connection could not be set up
	KindTimeout                          // no answer in time
	KindStatus                           // the server answered with a non-2xx status
	KindBadResponse                      // the answer is not what was asked for
	KindUpstream                         // the server reported an error inside a 2xx answer
	KindInterrupted                      // the connection ended before the answer did
	KindCanceled                         // the caller cancelled (a person pressed Stop)
)

func (k ErrorKind) String() string {
	switch k {
	case KindInvalid:
		return "invalid"
	case KindConnect:
		return "connect"
	case KindDNS:
		return "dns"
	case KindTLS:
		return "tls"
	case KindTimeout:
		return "timeout"
	case KindStatus:
		return "status"
	case KindBadResponse:
		return "bad response"
	case KindUpstream:
		return "upstream"
	case KindInterrupted:
		return "interrupted"
	case KindCanceled:
		return "canceled"
	}
	return "unknown"
}

// Error is a failure talking to an endpoint. Message is one plain sentence
// a person can act on ("Could not connect to http://localhost:11434:
// connection refused."), safe to show: it never holds the API key, a stack
// trace or Go's own wording. Err keeps the cause for the log.
type Error struct {
	Kind    ErrorKind
	URL     string // what was asked, without credentials or query
	Status  int    // the HTTP status, when the server answered with one
	Message string // one sentence, safe to show a person
	Body    string // a short excerpt of what the server said, when it said anything
	Err     error  // the cause; may be nil
}

// Error returns the sentence; the cause is reachable with errors.Unwrap.
func (e *Error) Error() string { return e.Message }

func (e *Error) Unwrap() error { return e.Err }

// errTooSlow is the cancellation cause for our own deadlines (the list and
// complete timeouts, the stream's idle timeout), so they can be told apart
// from a caller's cancellation.
var errTooSlow = errors.New("llm: no answer in time")

// ErrClosed is the cause of the error Stream.Next returns after Close.
var ErrClosed = errors.New("llm: stream closed")

// excerptLimit bounds the excerpt of a server's words kept in an Error.
const excerptLimit = 200

// errorBodyLimit bounds how much of an error answer is read.
const errorBodyLimit = 64 << 10

// target describes the endpoint in sentences: origin for connection-level
// failures, the request URL for answers.
type target struct {
	origin string // scheme://host[:port]
	url    string // scheme://host[:port]/path
	key    string // the API key, to scrub from anything a server echoes
}

// transportError turns a failure of http.Client.Do (or of reading a body)
// into a sentence. parent is the caller's context, ctx the one the request
// ran under; limit is the deadline that applied, for the timeout sentence,
// and idle says the limit was a gap between bytes rather than a total.
func transportError(parent, ctx context.Context, t target, limit time.Duration, idle bool, err error) *Error {
	e := &Error{URL: t.url, Err: err}
	switch {
	case parent.Err() != nil:
		e.Kind, e.Err = KindCanceled, fmt.Errorf("%w: %w", parent.Err(), err)
		e.Message = fmt.Sprintf("The request to %s was cancelled.", t.origin)
		return e
	case ctx != nil && errors.Is(context.Cause(ctx), ErrClosed):
		e.Kind, e.Err = KindCanceled, fmt.Errorf("%w: %w", ErrClosed, err)
		e.Message = fmt.Sprintf("The request to %s was cancelled.", t.origin)
		return e
	case ctx != nil && errors.Is(context.Cause(ctx), errTooSlow):
		e.Kind = KindTimeout
		if !errors.Is(err, context.DeadlineExceeded) {
			// The transport reports the cause or the deadline, depending
			// on where it was; callers should only have to ask for one.
			e.Err = fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
		}
		if idle {
			e.Message = fmt.Sprintf("No answer from %s for %s; stopped waiting.", t.origin, humanDuration(limit))
		} else {
			e.Message = fmt.Sprintf("No answer from %s within %s.", t.origin, humanDuration(limit))
		}
		return e
	}

	var dnsErr *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var badHost x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	var recordErr tls.RecordHeaderError
	var alert tls.AlertError
	var netErr net.Error
	msg := err.Error()
	switch {
	case errors.As(err, &dnsErr):
		e.Kind = KindDNS
		host := dnsErr.Name
		if host == "" {
			host = t.origin
		}
		switch {
		case dnsErr.IsNotFound:
			e.Message = fmt.Sprintf("Could not find the host %s: the name does not resolve.", host)
		case dnsErr.IsTimeout:
			e.Message = fmt.Sprintf("Could not look up the host %s: the name server did not answer in time.", host)
		default:
			e.Message = fmt.Sprintf("Could not look up the host %s.", host)
		}
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Kind = KindConnect
		e.Message = fmt.Sprintf("Could not connect to %s: connection refused.", t.origin)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		e.Kind = KindConnect
		e.Message = fmt.Sprintf("The connection to %s was reset before an answer came.", t.origin)
	case errors.Is(err, syscall.EHOSTUNREACH):
		e.Kind = KindConnect
		e.Message = fmt.Sprintf("Could not connect to %s: the host is unreachable.", t.origin)
	case errors.Is(err, syscall.ENETUNREACH):
		e.Kind = KindConnect
		e.Message = fmt.Sprintf("Could not connect to %s: the network is unreachable.", t.origin)
	case errors.As(err, &unknownCA):
		e.Kind = KindTLS
		e.Message = fmt.Sprintf("Could not connect securely to %s: its certificate is signed by an authority this machine does not trust.", t.origin)
	case errors.As(err, &badHost):
		e.Kind = KindTLS
		e.Message = fmt.Sprintf("Could not connect securely to %s: its certificate is for a different name.", t.origin)
	case errors.As(err, &invalidCert):
		e.Kind = KindTLS
		if invalidCert.Reason == x509.Expired {
			e.Message = fmt.Sprintf("Could not connect securely to %s: its certificate has expired or is not yet valid.", t.origin)
		} else {
			e.Message = fmt.Sprintf("Could not connect securely to %s: its certificate is not valid.", t.origin)
		}
	case errors.As(err, &recordErr):
		e.Kind = KindTLS
		e.Message = fmt.Sprintf("Could not connect securely to %s: it does not speak TLS (try http:// instead of https://).", t.origin)
	case strings.Contains(msg, "server gave HTTP response to HTTPS client"):
		// net/http replaces the tls.RecordHeaderError with a plain error
		// in exactly this case, so the text is all there is to go on.
		e.Kind = KindTLS
		e.Message = fmt.Sprintf("Could not connect securely to %s: it answered in plain HTTP (try http:// instead of https://).", t.origin)
	case strings.Contains(msg, "malformed HTTP response"):
		e.Kind = KindBadResponse
		e.Message = fmt.Sprintf("%s did not answer in HTTP (if it expects TLS, use https://).", t.origin)
	case errors.As(err, &alert):
		e.Kind = KindTLS
		e.Message = fmt.Sprintf("Could not connect securely to %s: the server refused the secure connection.", t.origin)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		e.Kind = KindConnect
		e.Message = fmt.Sprintf("%s closed the connection without answering.", t.origin)
	case errors.As(err, &netErr) && netErr.Timeout():
		e.Kind = KindTimeout
		e.Message = fmt.Sprintf("No answer from %s in time.", t.origin)
	default:
		e.Kind = KindConnect
		e.Message = fmt.Sprintf("Could not reach %s.", t.origin)
	}
	return e
}

// statusError reads an excerpt of a non-2xx answer and says what the
// server said.
func statusError(t target, resp *http.Response) *Error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
	said := scrub(serverSays(raw), t.key)
	e := &Error{Kind: KindStatus, URL: t.url, Status: resp.StatusCode, Body: said}
	status := fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	if http.StatusText(resp.StatusCode) == "" {
		status = fmt.Sprintf("status %d", resp.StatusCode)
	}
	hint := ""
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		hint = " (check the API key)"
	case http.StatusNotFound:
		// A missing model is the server's sentence to say; a missing
		// route is usually a base URL without its /v1.
		if !strings.Contains(strings.ReplaceAll(strings.ToLower(said), "/models", ""), "model") {
			hint = " (check the address; it usually ends in /v1)"
		}
	}
	if said == "" {
		e.Message = fmt.Sprintf("%s answered %s%s.", t.url, status, hint)
	} else {
		e.Message = fmt.Sprintf("%s answered %s%s: %s", t.url, status, hint, sentenceEnd(said))
	}
	e.Err = fmt.Errorf("llm: %s: http %d", t.url, resp.StatusCode)
	return e
}

// upstreamError is an error the server reported inside a 2xx answer, such
// as an {"error":{…}} object in the middle of a stream.
func upstreamError(t target, said string, status int) *Error {
	said = scrub(said, t.key)
	e := &Error{Kind: KindUpstream, URL: t.url, Status: status, Body: said}
	if said == "" {
		e.Message = fmt.Sprintf("%s reported an error without saying what it was.", t.origin)
	} else {
		e.Message = fmt.Sprintf("%s reported an error: %s", t.origin, sentenceEnd(said))
	}
	e.Err = fmt.Errorf("llm: %s: upstream error", t.url)
	return e
}

// badResponse is an answer that is not what was asked for; what says what
// was expected ("a model list").
func badResponse(t target, what string, raw []byte, cause error) *Error {
	said := scrub(serverSays(raw), t.key)
	e := &Error{Kind: KindBadResponse, URL: t.url, Body: said, Err: cause}
	if said == "" {
		e.Message = fmt.Sprintf("%s did not answer with %s (the answer was empty).", t.url, what)
	} else {
		e.Message = fmt.Sprintf("%s did not answer with %s; it sent: %s", t.url, what, sentenceEnd(said))
	}
	return e
}

// serverSays finds the human part of an error body: error.message, error,
// detail or message from JSON (OpenAI, Ollama, vLLM, FastAPI, OpenRouter),
// the <title> of an HTML page (a proxy's 502), or else the text itself,
// whitespace-collapsed and cut to about 200 characters.
func serverSays(raw []byte) string {
	raw = trimBOM(raw)
	if s := jsonMessage(raw); s != "" {
		return excerpt(s)
	}
	text := string(raw)
	if lower := strings.ToLower(text); strings.Contains(lower, "<html") || strings.Contains(lower, "<!doctype") {
		if i := strings.Index(lower, "<title>"); i >= 0 {
			if j := strings.Index(lower[i:], "</title>"); j > 0 {
				return excerpt(text[i+len("<title>") : i+j])
			}
		}
		text = stripTags(text)
	}
	return excerpt(text)
}

// jsonMessage extracts a message from the error shapes servers use.
func jsonMessage(raw []byte) string {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Detail  json.RawMessage `json:"detail"`
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(raw, &body) != nil {
		return ""
	}
	for _, field := range []json.RawMessage{body.Error, body.Detail, body.Message} {
		if s := messageIn(field, 0); s != "" {
			return s
		}
	}
	return ""
}

// messageIn reads a message out of one JSON value: a string, an object
// with a message (or nested error/detail/msg), or a FastAPI list of
// {"msg": …} objects.
func messageIn(raw json.RawMessage, depth int) string {
	if len(raw) == 0 || depth > 3 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case '{':
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return ""
		}
		for _, k := range []string{"message", "msg", "error", "detail"} {
			if s := messageIn(obj[k], depth+1); s != "" {
				return s
			}
		}
	case '[':
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil {
			return ""
		}
		var parts []string
		for _, item := range list {
			if s := messageIn(item, depth+1); s != "" {
				parts = append(parts, s)
			}
			if len(parts) == 3 {
				break
			}
		}
		return strings.Join(parts, "; ")
	}
	return ""
}

// excerpt collapses whitespace and cuts s to about excerptLimit characters
// on a rune boundary.
func excerpt(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "�")), " ")
	if utf8.RuneCountInString(s) <= excerptLimit {
		return s
	}
	n := 0
	for i := range s {
		if n == excerptLimit {
			return strings.TrimRight(s[:i], " ") + "…"
		}
		n++
	}
	return s
}

func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
			b.WriteByte(' ')
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// scrub removes the API key from text a server echoed back.
func scrub(s, key string) string {
	if len(key) < 4 {
		return s
	}
	return strings.ReplaceAll(s, key, "[API key]")
}

// sentenceEnd ends s with a full stop unless it already ends a sentence.
func sentenceEnd(s string) string {
	if s == "" {
		return s
	}
	switch s[len(s)-1] {
	case '.', '!', '?':
		return s
	}
	if strings.HasSuffix(s, "…") {
		return s
	}
	return s + "."
}

// humanDuration writes a duration the way a person would: "10 s",
// "1.5 s", "500 ms", "5 min".
func humanDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0 s"
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d >= 2*time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%d s", d/time.Second)
	default:
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", d.Seconds()), "0"), ".") + " s"
	}
}

func trimBOM(b []byte) []byte {
	if len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		return b[3:]
	}
	return b
}
