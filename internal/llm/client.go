package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults for Options left zero.
const (
	DefaultListTimeout       = 10 * time.Second
	DefaultCompleteTimeout   = 2 * time.Minute
	DefaultStreamIdleTimeout = 5 * time.Minute
	DefaultMaxLineBytes      = 4 << 20
)

// bodyLimit bounds a whole non-streaming answer (a model list, a
// completion). OpenRouter's list of every model is a few megabytes.
const bodyLimit = 32 << 20

// Options configure a Client. The zero value is usable.
type Options struct {
	// HTTPClient sends every request. Nil means a client of our own over
	// a clone of the default transport. Give it no overall Timeout: a
	// reply streams for as long as the model writes.
	HTTPClient *http.Client
	// ListTimeout bounds ListModels when the endpoint sets no Timeout.
	ListTimeout time.Duration
	// CompleteTimeout bounds Complete when the endpoint sets no Timeout.
	// It is long because a model that thinks before a title is slow.
	CompleteTimeout time.Duration
	// StreamIdleTimeout ends a stream that has sent nothing for this long,
	// including the wait for its first byte (a large prompt on a CPU can
	// take minutes). Negative disables it.
	StreamIdleTimeout time.Duration
	// MaxLineBytes bounds one line, and one event, of a stream, so a
	// hostile server cannot exhaust memory.
	MaxLineBytes int
	// UserAgent is sent with every request.
	UserAgent string
}

// Client talks to OpenAI-compatible endpoints. It holds no per-endpoint
// state, so one Client serves every connection; it is safe for concurrent
// use.
type Client struct {
	hc   *http.Client
	opts Options
}

// New returns a Client with opts, defaults filled in.
func New(opts Options) *Client {
	if opts.HTTPClient == nil {
		var rt http.RoundTripper = http.DefaultTransport
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			rt = t.Clone()
		}
		opts.HTTPClient = &http.Client{Transport: rt}
	}
	if opts.ListTimeout <= 0 {
		opts.ListTimeout = DefaultListTimeout
	}
	if opts.CompleteTimeout <= 0 {
		opts.CompleteTimeout = DefaultCompleteTimeout
	}
	if opts.StreamIdleTimeout == 0 {
		opts.StreamIdleTimeout = DefaultStreamIdleTimeout
	}
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "LLeMbas"
	}
	return &Client{hc: opts.HTTPClient, opts: opts}
}

// resolve checks ep.BaseURL and returns the URL for path under it, with
// the sentences' view of it.
func resolve(ep Endpoint, path string) (*url.URL, target, error) {
	base := strings.TrimSpace(ep.BaseURL)
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		shown, cause := "this address", errors.New("llm: base url does not parse")
		if err == nil {
			u.User = nil // never repeat a password typed into the address
			shown = fmt.Sprintf("%q", u.String())
			cause = fmt.Errorf("llm: base url %s: want http or https and a host", shown)
		}
		return nil, target{}, &Error{
			Kind:    KindInvalid,
			Message: fmt.Sprintf("The address %s is not usable: it should look like http://localhost:11434/v1.", shown),
			Err:     cause,
		}
	}
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawPath = ""
	u.Fragment = ""
	t := target{
		origin: u.Scheme + "://" + u.Host,
		url:    u.Scheme + "://" + u.Host + u.EscapedPath(),
		key:    ep.APIKey,
	}
	return u, t, nil
}

// newRequest builds a request to u with the endpoint's key and headers.
func (c *Client) newRequest(ctx context.Context, ep Endpoint, method string, u *url.URL, body []byte, accept string) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("llm: new request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", c.opts.UserAgent)
	if ep.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+ep.APIKey)
	}
	// Extra headers come last so a provider that wants its key under
	// another name (api-key, x-api-key) can have it.
	for k, v := range ep.Headers {
		req.Header.Set(k, v)
	}
	return req, nil
}

// readAll reads a whole answer, bounded by bodyLimit.
func readAll(r io.Reader) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, bodyLimit+1))
	if len(b) > bodyLimit {
		return b[:bodyLimit], true, err
	}
	return b, false, err
}

// timeoutFor is the deadline for a non-streaming call.
func timeoutFor(ep Endpoint, fallback time.Duration) time.Duration {
	if ep.Timeout > 0 {
		return ep.Timeout
	}
	return fallback
}
