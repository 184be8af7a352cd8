package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// client is the browsers: one signed-in person (one cookie jar) with as
// many chats open as the phase asks, over loopback HTTP.
type client struct {
	base    string
	modelID string
	hc      *http.Client
}

func newClient(in *instance, conns int) (*client, error) {
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{
		Jar: jar,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConns:        conns + 64,
			MaxIdleConnsPerHost: conns + 64,
			IdleConnTimeout:     30 * time.Second,
			DisableCompression:  true,
		},
		// Redirects are read, not followed: the start answers with the
		// chat's address.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	c := &client{base: in.base, modelID: in.modelID, hc: hc}
	res, err := hc.PostForm(in.base+"/auth/login", url.Values{"username": {loadUser}, "password": {loadPassword}})
	if err != nil {
		return nil, err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("sign in: status %d", res.StatusCode)
	}
	return c, nil
}

// outcome is what one follower saw of one reply. Times are since t0.
type outcome struct {
	id    int
	stage string // where it failed; "" when it was followed to the end
	err   error

	began        time.Duration // the composer's POST was sent
	started      time.Duration // its answer arrived
	paged        time.Duration // the chat page arrived
	opened       time.Duration // the stream's headers arrived
	firstContent time.Duration // the proxy forwarded the first token
	firstRender  time.Duration // the first render event arrived
	ended        time.Duration // the stream ended, whatever the reason
	held         bool          // done arrived with every token

	renders int
	gaps    []time.Duration // between render events
	delays  []time.Duration // per token: forwarded by the proxy → first render event showing it
	late    int             // tokens forwarded before the stream was open (not counted in delays)
}

var streamAttr = regexp.MustCompile(`data-stream="([^"]+)"`)

// follow starts a chat as a browser does (the composer's POST, the chat
// page it is sent to, the stream the page opens), then reads the stream
// until done.
func (c *client) follow(ctx context.Context, tr *trace) (o outcome) {
	o.id = tr.id
	fail := func(stage string, err error) outcome {
		o.stage, o.err = stage, err
		return o
	}
	prompt := tag(tr.id) + " Write me a long answer, please."
	o.began = since()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/api/chats/start",
		strings.NewReader(url.Values{"content": {prompt}, "model": {c.modelID}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := c.hc.Do(req)
	if err != nil {
		return fail("start", err)
	}
	drain(res)
	o.started = since()
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/chat/") {
		return fail("start", fmt.Errorf("status %d, location %q", res.StatusCode, loc))
	}

	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, c.base+loc, nil)
	res, err = c.hc.Do(req)
	if err != nil {
		return fail("page", err)
	}
	page, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		return fail("page", fmt.Errorf("status %d: %v", res.StatusCode, err))
	}
	o.paged = since()
	m := streamAttr.FindSubmatch(page)
	if m == nil {
		return fail("page", errors.New("the chat page has no stream to follow"))
	}

	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, c.base+string(m[1]), nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err = c.hc.Do(req)
	if err != nil {
		return fail("stream", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fail("stream", fmt.Errorf("status %d", res.StatusCode))
	}
	o.opened = since()
	defer func() { o.ended = since() }()
	tr.opened()

	var lastRender time.Duration
	seen := 0 // highest token shown so far
	err = readEvents(res.Body, func(name string, maxSeq int) bool {
		now := since()
		switch name {
		case "render":
			o.renders++
			if o.renders == 1 {
				o.firstRender = now
				o.firstContent = time.Duration(tr.emitted(1))
			} else {
				o.gaps = append(o.gaps, now-lastRender)
			}
			lastRender = now
			for k := seen + 1; k <= maxSeq; k++ {
				at := time.Duration(tr.emitted(k))
				switch {
				case at == 0: // shown before the proxy stamped it: cannot happen
				case at < o.opened:
					o.late++
				default:
					o.delays = append(o.delays, now-at)
				}
			}
			seen = max(seen, maxSeq)
		case "done":
			o.held = maxSeq == tr.tokens
			if !o.held {
				o.stage, o.err = "done", fmt.Errorf("finished with %d of %d tokens", maxSeq, tr.tokens)
			}
			return false
		}
		return true
	})
	if o.held || o.stage != "" {
		return o
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("still streaming when the phase ended (%d of %d tokens shown)", seen, tr.tokens)
	}
	return fail("stream", err)
}

func drain(res *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
	res.Body.Close()
}

// readEvents reads server-sent events and calls fn with each event's name
// and the highest token number in its data ("tok17"); fn returns false to
// stop.
func readEvents(r io.Reader, fn func(name string, maxSeq int) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4<<10), 8<<20)
	name, maxSeq, pending := "", 0, false
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if pending {
				if !fn(name, maxSeq) {
					return nil
				}
			}
			name, maxSeq, pending = "", 0, false
		case bytes.HasPrefix(line, []byte("event:")):
			name = string(bytes.TrimSpace(line[len("event:"):]))
			pending = true
		case bytes.HasPrefix(line, []byte("data:")):
			pending = true
			if i := bytes.LastIndex(line, []byte("tok")); i >= 0 {
				maxSeq = max(maxSeq, leadingInt(line[i+3:]))
			}
		}
	}
	return sc.Err()
}
