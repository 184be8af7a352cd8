package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"lembas/internal/llm/llmtest"
)

// upstream is the fake model server as LLeMbas sees it: llmtest behind a
// small reverse proxy of ours. llmtest has no hook for "a delta went out
// now", so the proxy reads the stream line by line as it forwards it and
// stamps every content delta (each carries its sequence number, "tok17 ")
// the moment before it writes it on to LLeMbas.
//
// The proxy also holds a reply's request until that reply's follower has
// its stream open (plus the trace's gap): the first token's timing is
// then known relative to the follower, whatever the ramp-up did, and no
// token is ever sent that nobody is watching yet.
type upstream struct {
	fake   *llmtest.Server
	URL    string // base URL including /v1, the proxy's
	srv    *http.Server
	client *http.Client
	target string // the fake's origin

	mu     sync.Mutex
	traces map[int]*trace
}

// trace is one reply's timeline, shared by the proxy (which stamps) and
// the follower (which reads).
type trace struct {
	id     int
	tokens int
	gap    time.Duration // from the follower's stream opening to the request going upstream

	open      chan struct{} // closed when the follower's stream is open
	openOnce  sync.Once
	emits     []atomic.Int64 // [seq] = ns since t0 when the proxy forwarded token seq; 0 = not yet
	requested atomic.Int64   // ns since t0 when the proxy sent the request upstream
}

func newTrace(id, tokens int, gap time.Duration) *trace {
	return &trace{id: id, tokens: tokens, gap: gap, open: make(chan struct{}), emits: make([]atomic.Int64, tokens+1)}
}

func (t *trace) opened() { t.openOnce.Do(func() { close(t.open) }) }

// emitted returns when token seq was forwarded, ns since t0; 0 if not.
func (t *trace) emitted(seq int) int64 {
	if seq <= 0 || seq >= len(t.emits) {
		return 0
	}
	return t.emits[seq].Load()
}

func startUpstream(model string) (*upstream, error) {
	fake := llmtest.New()
	fake.SetModels(llmtest.ShapeOpenAI, llmtest.ModelSpec{ID: model, ContextLength: 32768})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fake.Close()
		return nil, err
	}
	u := &upstream{fake: fake, traces: map[int]*trace{}, target: fake.URL[:len(fake.URL)-len("/v1")]}
	u.client = &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        4096,
		MaxIdleConnsPerHost: 4096,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}}
	u.srv = &http.Server{Handler: u, ReadHeaderTimeout: 10 * time.Second}
	u.URL = "http://" + ln.Addr().String() + "/v1"
	go func() { _ = u.srv.Serve(ln) }()
	return u, nil
}

func (u *upstream) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = u.srv.Shutdown(ctx)
	_ = u.srv.Close()
	u.fake.Close()
	u.client.CloseIdleConnections()
}

func (u *upstream) add(t *trace) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.traces[t.id] = t
}

func (u *upstream) remove(id int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.traces, id)
}

func (u *upstream) lookup(id int) *trace {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.traces[id]
}

// promptTag marks which reply a request is for: the person's prompt
// starts with it, and the request carries the prompt.
var promptTag = regexp.MustCompile(`\[load (\d+)\]`)

func tag(id int) string { return fmt.Sprintf("[load %d]", id) }

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var tr *trace
	if r.Method == http.MethodPost && bytes.Contains(body, []byte(`"stream":true`)) {
		if m := promptTag.FindSubmatch(body); m != nil {
			id, _ := strconv.Atoi(string(m[1]))
			tr = u.lookup(id)
		}
	}
	if tr != nil {
		// Prompt processing, as the follower sees it: nothing until its
		// stream is open and the gap has passed.
		select {
		case <-tr.open:
		case <-r.Context().Done():
			return
		}
		if tr.gap > 0 {
			select {
			case <-time.After(tr.gap):
			case <-r.Context().Done():
				return
			}
		}
		tr.requested.Store(int64(since()))
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, u.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	res, err := u.client.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer res.Body.Close()
	for k, v := range res.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(res.StatusCode)
	if tr == nil {
		_, _ = io.Copy(w, res.Body)
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	br := bufio.NewReaderSize(res.Body, 16<<10)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			if seq := contentSeq(line); seq > 0 && seq < len(tr.emits) {
				tr.emits[seq].CompareAndSwap(0, int64(since()))
			}
			if _, werr := w.Write(line); werr != nil {
				return
			}
			if len(bytes.TrimRight(line, "\r\n")) == 0 {
				if rc.Flush() != nil {
					return
				}
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			_ = rc.Flush()
			return
		}
	}
}

// contentSeq finds a content delta's sequence number in a data: line,
// {"content":"tok17 "}; 0 when the line carries none.
func contentSeq(line []byte) int {
	if !bytes.HasPrefix(line, []byte("data:")) {
		return 0
	}
	const marker = `"content":"tok`
	i := bytes.Index(line, []byte(marker))
	if i < 0 {
		return 0
	}
	return leadingInt(line[i+len(marker):])
}

// leadingInt parses the decimal digits at the start of b; 0 if none.
func leadingInt(b []byte) int {
	n, digits := 0, 0
	for _, c := range b {
		if c < '0' || c > '9' || digits > 9 {
			break
		}
		n = n*10 + int(c-'0')
		digits++
	}
	return n
}

// script is a reply of n tokens, "tok1 tok2 …", a paragraph every twenty
// tokens, sent at tps tokens a second.
func script(n int, tps float64) llmtest.Reply {
	deltas := make([]string, n)
	for i := range deltas {
		d := "tok" + strconv.Itoa(i+1) + " "
		if (i+1)%20 == 0 && i+1 < n {
			d += "\n\n"
		}
		deltas[i] = d
	}
	return llmtest.Reply{Deltas: deltas, TokensPerSecond: tps, Usage: true}
}
